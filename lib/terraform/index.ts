import * as fs from 'fs';
import * as path from 'path';
import { renderAwsRulesDoc } from './aws-rules-doc';
import { renderCdktnPackage } from './cdktn';
import { renderClusterCatalog, renderMetricCatalog, renderRdsProxyCatalog } from './catalogs';
import { DEPRECATED_MODULES, moduleTfFiles, renderDeprecatedModule } from './deprecated-modules';
import { generatedBy } from './hcl';
import { EXAMPLES, INTERNAL_MODULES, MODULE_SPECS } from './modules';
import { PGBOUNCER_BOOTSTRAP_FILE, PGBOUNCER_MODULE, renderPgBouncerBootstrapTemplate, renderPgBouncerCatalog } from './pgbouncer';
import { renderReadme } from './readme';
import { fillRegions } from './regions';
import { moduleRegions } from './validations';
import { loadVectors, renderVectorTests, vectorExpectations } from './vectors';

/**
 * What the Terraform modules restate from lib/model, rendered so that each fact keeps one source:
 * the catalog locals (catalogs.ts), the `# BEGIN generated <id>` regions of the modules' .tf files
 * (validations.ts), one `terraform test` file of the shared vectors per module (vectors.ts), and the
 * READMEs (readme.ts: terraform-docs' tables, run on this render's .tf files, and the kit's Rules table).
 * Everything is rendered in one pass from lib/model and the hand-written files; nothing reads the
 * generator's committed output back.
 */
export { AWS_PROVIDER_BASE_VERSION, EXAMPLES, INTERNAL_MODULES, MODULES, MODULE_SPECS, PROVIDER_ARGUMENT_FLOORS, moduleOfRule, modulesOfRule, moduleSpec, propertyNames, rulesOf } from './modules';
export { hclString, hclValue, generatedBy } from './hcl';
export { parseOutputs, parseVariables, variableDefaults, type VariableInfo } from './module-variables';
export { TERRAFORM_DOCS_VERSION, terraformDocsBinary } from './terraform-docs';
export { awsRuleRows } from './aws-rules-doc';
export { PGBOUNCER_BOOTSTRAP_FILE } from './pgbouncer';
export { CDKTN_PACKAGE, CDKTN_SOURCE_REPOSITORY, renderCdktnPackage } from './cdktn';
export { CDKTN_MODULES, camelCase, moduleBinding } from './cdktn-bindings';
export { DEPRECATED_MODULES, managedResources, type DeprecatedModule } from './deprecated-modules';
export { loadVectors, terraformMessages, vectorExpectations, vectorValues, vectorVariables, type Vector, type VectorExpectation } from './vectors';
export { moduleRegions } from './validations';
export { type Region } from './regions';

export const ROOT = path.join(__dirname, '..', '..');

/** The .tf files of a module directory rendered so far, by file name: its README's tables read them. */
function renderedTf(files: ReadonlyMap<string, string>, dir: string): Map<string, string> {
  return new Map([...files].filter(([rel]) => path.dirname(rel) === dir && rel.endsWith('.tf')).map(([rel, text]) => [path.basename(rel), text]));
}

/** Every generated file's path (relative to the repository) and its content. */
export function renderAll(): Map<string, string> {
  const files = new Map<string, string>();
  files.set('modules/aurora-optimized-reads/catalog.tf', renderClusterCatalog());
  files.set('modules/dashboard/metrics.tf', renderMetricCatalog());
  files.set(`modules/${PGBOUNCER_MODULE}/catalog.tf`, renderPgBouncerCatalog());
  files.set('modules/rds-proxy/catalog.tf', renderRdsProxyCatalog());
  files.set(PGBOUNCER_BOOTSTRAP_FILE, renderPgBouncerBootstrapTemplate());
  files.set('docs/AWS-RULES.md', renderAwsRulesDoc(loadVectors(), generatedBy('lib/model/rules.ts and lib/model/aws-facts.ts')));
  const expectations = vectorExpectations();
  for (const { module } of MODULE_SPECS) {
    const dir = path.join('modules', module);
    const regions = moduleRegions(module);
    for (const file of [...new Set(regions.map((r) => r.file))]) {
      const rel = path.join(dir, file);
      files.set(rel, fillRegions(fs.readFileSync(path.join(ROOT, rel), 'utf8'), regions.filter((r) => r.file === file), rel));
    }
    files.set(path.join(dir, 'tests', 'vectors.tftest.hcl'), renderVectorTests(module, expectations));
    files.set(path.join(dir, 'README.md'), renderReadme(module, path.join(ROOT, dir), regions, renderedTf(files, dir)));
  }
  // Examples without rules of their own (examples/complete has one, rendered above).
  for (const module of [...INTERNAL_MODULES, ...EXAMPLES.filter((e) => !MODULE_SPECS.some((m) => m.module === e))]) {
    const dir = path.join('modules', module);
    files.set(path.join(dir, 'README.md'), renderReadme(module, path.join(ROOT, dir), [], renderedTf(files, dir)));
  }
  // Former module directories: wrappers of the renamed modules as just rendered.
  for (const d of DEPRECATED_MODULES) {
    const replacement = new Map([...moduleTfFiles(ROOT, d.replacement), ...renderedTf(files, path.join('modules', d.replacement))]);
    const version = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    for (const [rel, content] of renderDeprecatedModule(d, replacement, version)) files.set(rel, content);
  }
  for (const [rel, content] of renderCdktnPackage(ROOT)) files.set(rel, content);
  return files;
}

/** Generated files whose committed content differs from a fresh render. */
export function staleFiles(): string[] {
  return [...renderAll()]
    .filter(([rel, content]) => {
      const file = path.join(ROOT, rel);
      return !fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== content;
    })
    .map(([rel]) => rel);
}

/** Writes every generated file that differs; returns the paths written. */
export function writeGenerated(): string[] {
  const written: string[] = [];
  for (const [rel, content] of renderAll()) {
    const file = path.join(ROOT, rel);
    if (fs.existsSync(file) && fs.readFileSync(file, 'utf8') === content) continue;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
    written.push(rel);
  }
  return written;
}
