import * as fs from 'fs';
import * as path from 'path';

/**
 * The sections terraform-docs writes above the inputs, for each module's and example's README:
 * requirements (Terraform and provider versions), providers, the modules it calls, and the resources
 * and data sources it declares, read from its .tf files (the generated ones too: a resource is a
 * resource wherever it is written).
 */
export interface ModuleFacts {
  readonly requiredVersion?: string;
  /** Local name -> source and version constraint, from `required_providers`. */
  readonly providers: ReadonlyArray<{ readonly name: string; readonly source: string; readonly version?: string }>;
  readonly modules: ReadonlyArray<{ readonly name: string; readonly source: string }>;
  readonly resources: ReadonlyArray<{ readonly mode: 'resource' | 'data'; readonly type: string; readonly name: string }>;
}

/**
 * The body of the block whose opening brace ends just before `start`: brace counting outside strings
 * and comments, up to the matching closing brace.
 */
export function blockBodyFrom(text: string, start: number): string {
  let depth = 1;
  let i = start;
  let inString = false;
  for (; i < text.length && depth > 0; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '#') i = text.indexOf('\n', i) - 1;
    else if (c === '{') depth++;
    else if (c === '}') depth--;
  }
  return text.slice(start, i - 1);
}

/** The body of the first top-level `<header> {` block whose header matches. */
function blockBody(text: string, header: RegExp): string | undefined {
  const match = new RegExp(`^${header.source}\\s*\\{$`, 'm').exec(text);
  return match ? blockBodyFrom(text, match.index + match[0].length) : undefined;
}

const quoted = (body: string | undefined, name: string) => (body === undefined ? undefined : new RegExp(`^\\s*${name}\\s*=\\s*"([^"]*)"`, 'm').exec(body)?.[1]);

export function moduleFacts(moduleDir: string): ModuleFacts {
  const files = fs.readdirSync(moduleDir).filter((f) => f.endsWith('.tf')).sort();
  const texts = files.map((f) => fs.readFileSync(path.join(moduleDir, f), 'utf8'));
  const terraform = texts.map((t) => blockBody(t, /terraform/)).find((b) => b !== undefined);
  const required = terraform === undefined ? undefined : blockBody(terraform.replace(/^ {2}/gm, ''), /required_providers/);
  const providers = [...(required ?? '').matchAll(/^\s*([a-z0-9_-]+)\s*=\s*\{([^}]*)\}/gm)].map((m) => ({
    name: m[1],
    source: quoted(m[2], 'source') ?? `hashicorp/${m[1]}`,
    version: quoted(m[2], 'version'),
  }));
  const modules = texts.flatMap((t) => [...t.matchAll(/^module "([^"]+)" \{$/gm)].map((m) => ({ name: m[1], source: quoted(blockBody(t.slice(m.index), /module "[^"]+"/), 'source') ?? '' })));
  const resources = texts.flatMap((t) => [...t.matchAll(/^(resource|data) "([^"]+)" "([^"]+)" \{$/gm)].map((m) => ({ mode: m[1] as 'resource' | 'data', type: m[2], name: m[3] })));
  return { requiredVersion: quoted(terraform, 'required_version'), providers, modules, resources };
}

const table = (header: string[], rows: string[][], none: string) =>
  rows.length === 0 ? none : [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');

/** The provider's registry page of a resource or data source (the hashicorp providers' layout). */
function docsLink(providers: ModuleFacts['providers'], mode: 'resource' | 'data', type: string): string | undefined {
  const provider = providers.find((p) => type.startsWith(`${p.name}_`));
  if (!provider) return undefined;
  return `https://registry.terraform.io/providers/${provider.source}/latest/docs/${mode === 'data' ? 'data-sources' : 'resources'}/${type.slice(provider.name.length + 1)}`;
}

export function requirementsTable(facts: ModuleFacts): string {
  const rows = [
    ...(facts.requiredVersion ? [['terraform', `\`${facts.requiredVersion}\``]] : []),
    ...facts.providers.map((p) => [`[${p.source}](https://registry.terraform.io/providers/${p.source}/latest)`, p.version ? `\`${p.version}\`` : 'any']),
  ];
  return table(['Name', 'Version'], rows, 'No requirements.');
}

export function providersTable(facts: ModuleFacts): string {
  return table(['Name', 'Source', 'Version'], facts.providers.map((p) => [`\`${p.name}\``, `\`${p.source}\``, p.version ? `\`${p.version}\`` : 'any']), 'No providers.');
}

export function modulesTable(facts: ModuleFacts): string {
  return table(['Name', 'Source'], facts.modules.map((m) => [`\`${m.name}\``, `\`${m.source}\``]), 'No modules.');
}

export function resourcesTable(facts: ModuleFacts): string {
  const rows = facts.resources.map((r) => {
    const address = `${r.mode === 'data' ? 'data.' : ''}${r.type}.${r.name}`;
    const link = docsLink(facts.providers, r.mode, r.type);
    return [link ? `[\`${address}\`](${link})` : `\`${address}\``, r.mode === 'data' ? 'data source' : 'resource'];
  });
  return table(['Name', 'Type'], rows, 'No resources.');
}
