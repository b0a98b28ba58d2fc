import * as fs from 'fs';
import * as path from 'path';
import { CDKTN_SOURCE_REPOSITORY } from './cdktn';
import { alignedMap, generatedBy } from './hcl';
import { blockBodyFrom, parseOutputs, parseVariables } from './module-variables';

/**
 * Module directories kept under a former name (docs/DECISIONS.md, "One name per thing"): each is a wrapper
 * that calls the renamed module with the same variables and outputs, and moves every resource into it, so a
 * configuration whose `source` still names the old directory plans no replacement. Rendered from the renamed
 * module's files, so the two cannot drift; removed in the next major version.
 */
export interface DeprecatedModule {
  /** The former directory under modules/. */
  readonly module: string;
  /** The directory it was renamed to. */
  readonly replacement: string;
  /** The wrapper's call of the replacement: where its resources move to (module.<call>.<address>). */
  readonly call: string;
  /** Why the name changed, for the README. */
  readonly reason: string;
}

export const DEPRECATED_MODULES: ReadonlyArray<DeprecatedModule> = [
  { module: 'pooling-proxy', replacement: 'rds-proxy', call: 'rds_proxy', reason: 'both engines pool, and `rds-proxy` says which one this is (beside `pgbouncer-proxy`)' },
];

/** The managed resources a module declares, as `<type>.<name>`, in file order of its .tf files. */
export function managedResources(tfFiles: ReadonlyMap<string, string>): string[] {
  return [...tfFiles.keys()]
    .sort()
    .flatMap((file) => [...tfFiles.get(file)!.matchAll(/^resource "([^"]+)" "([^"]+)" \{$/gm)].map((m) => `${m[1]}.${m[2]}`));
}

/** The variable blocks of a module's variables.tf without their validations (the called module runs them once) or region markers. */
function passThroughVariables(text: string): string {
  let out = '';
  let i = 0;
  const validation = /^ *validation \{$/gm;
  for (let m = validation.exec(text); m; m = validation.exec(text)) {
    const end = m.index + m[0].length + blockBodyFrom(text, m.index + m[0].length).length + 1;
    out += text.slice(i, m.index).replace(/\n\n$/, '\n');
    i = end + (text[end] === '\n' ? 1 : 0);
    validation.lastIndex = i;
  }
  out += text.slice(i);
  return out
    .split('\n')
    .filter((l) => !/^\s*# (BEGIN|END) generated /.test(l))
    .join('\n')
    .replace(/\n\n(\s*\})/g, '\n$1')
    .replace(/\n{3,}/g, '\n\n');
}

/**
 * The wrapper's files, by path relative to the repository. `replacementFiles` holds the renamed module's .tf
 * files as rendered (generated regions filled), by file name; its versions.tf is the wrapper's too. `version` is
 * the kit's, whose release tag the README's Usage names.
 */
export function renderDeprecatedModule(d: DeprecatedModule, replacementFiles: ReadonlyMap<string, string>, version: string): Map<string, string> {
  const dir = path.join('modules', d.module);
  const header = `# ${generatedBy(`modules/${d.replacement}`)}`;
  const variablesTf = replacementFiles.get('variables.tf')!;
  const variables = parseVariables(variablesTf);
  const outputs = parseOutputs(replacementFiles.get('outputs.tf')!);
  const resources = managedResources(new Map([...replacementFiles].filter(([f]) => f !== 'variables.tf' && f !== 'outputs.tf')));
  const files = new Map<string, string>();
  files.set(
    path.join(dir, 'main.tf'),
    [
      header,
      `#`,
      `# Deprecated: modules/${d.replacement} under its former name. Same variables and outputs; every resource`,
      `# moves into module.${d.call}, so a state made by this module before plans no replacement. Use`,
      `# modules/${d.replacement} instead (the module call's own address does not change with its source).`,
      '',
      `module "${d.call}" {`,
      `  source = "../${d.replacement}"`,
      '',
      ...alignedMap('  ', variables.map((v) => [v.name, `var.${v.name}`] as const)),
      '}',
      ...resources.flatMap((r) => ['', 'moved {', `  from = ${r}`, `  to   = module.${d.call}.${r}`, '}']),
      '',
    ].join('\n'),
  );
  files.set(path.join(dir, 'variables.tf'), `${header}\n\n${passThroughVariables(variablesTf)}`);
  files.set(
    path.join(dir, 'outputs.tf'),
    `${header}\n${outputs.map((o) => `\noutput "${o.name}" {\n  description = ${JSON.stringify(o.description)}\n  value       = module.${d.call}.${o.name}\n}\n`).join('')}`,
  );
  files.set(path.join(dir, 'versions.tf'), `${header}\n\n${replacementFiles.get('versions.tf')!}`);
  files.set(
    path.join(dir, 'README.md'),
    [
      `<!-- ${generatedBy(`modules/${d.replacement}`)} -->`,
      `# ${d.module} (deprecated)`,
      '',
      `Renamed [\`${d.replacement}\`](../${d.replacement}/README.md): ${d.reason}. This directory is that module under its`,
      `former name, with the same variables and outputs, kept so that a configuration whose \`source\` names it`,
      `still plans: \`moved\` blocks carry each resource to \`module.${d.call}\` inside it, updated in place, none`,
      'replaced. It goes in the next major version.',
      '',
      '## Usage',
      '',
      `Change \`source\` to \`modules/${d.replacement}\`, keep the inputs, and run \`terraform init\`:`,
      '',
      '```hcl',
      'module "proxy" {',
      `  source = "${CDKTN_SOURCE_REPOSITORY}//modules/${d.replacement}?ref=v${version}" # was modules/${d.module}`,
      '',
      '  # the same inputs as before',
      '}',
      '```',
      '',
      'Addresses come from the module call\'s name, not its source: a state made by the former module plans no move',
      `and no replacement. A state that went through this wrapper has its resources in \`module.${d.call}\` inside the`,
      'call: move each back with `terraform state mv` before changing `source`, e.g.',
      '',
      '```sh',
      `terraform state mv 'module.proxy.module.${d.call}.${resources[0]}' 'module.proxy.${resources[0]}'`,
      '```',
      '',
    ].join('\n'),
  );
  return files;
}

/** The renamed module's .tf files as they are on disk, by file name, for a wrapper rendered outside renderAll. */
export function moduleTfFiles(root: string, module: string): Map<string, string> {
  const dir = path.join(root, 'modules', module);
  return new Map(
    fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.tf'))
      .map((f) => [f, fs.readFileSync(path.join(dir, f), 'utf8')]),
  );
}
