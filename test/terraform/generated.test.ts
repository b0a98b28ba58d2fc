import * as fs from 'fs';
import * as path from 'path';
import {
  AWS_PROVIDER_BASE_VERSION,
  EXAMPLES,
  INTERNAL_MODULES,
  MODULES,
  PROVIDER_ARGUMENT_FLOORS,
  ROOT,
  moduleRegions,
  modulesOfRule,
  parseOutputs,
  parseVariables,
  terraformMessages,
  vectorExpectations,
  variableDefaults,
} from '../../lib/terraform';
import { DEFAULT_ALARM_THRESHOLDS, DEFAULT_AUTO_MINOR_VERSION_UPGRADE, autoMinorVersionUpgradeWarning, DEFAULT_ENGINE_VERSION, DEFAULT_POOL_SETTINGS, RULE_TABLES, terraformUses, type Rule } from '../../lib/model';
import { DEFAULT_SESSION_MAX_CONNECTIONS_PERCENT } from '../../lib/model/pgbouncer-fleet';
import { POOL_SETTINGS_MODULES, POOL_VARIABLES } from '../../lib/terraform/pool-variables';
import { loadVectors } from '../helpers/vectors';

describe('the model\'s rules in Terraform', () => {
  const rules = Object.values(RULE_TABLES).flat() as Array<Rule<Record<string, unknown>>>;

  test('every rule of the shared tables is stated by a module, with a variable for each property it reads, or says why not', () => {
    for (const rule of rules) {
      const uses = terraformUses(rule);
      expect([rule.id, uses.length > 0 || (rule.notInTerraform ?? '').length > 20]).toEqual([rule.id, true]);
      expect([rule.id, uses.length > 0 && rule.notInTerraform !== undefined]).toEqual([rule.id, false]);
      for (const use of uses) for (const p of rule.properties) expect([rule.id, use.module, p, typeof use.names[p]]).toEqual([rule.id, use.module, p, 'string']);
    }
  });

  test('the pool settings are stated by both engines\' modules, with the same messages', () => {
    for (const id of ['max-connections-percent', 'max-idle-connections-percent', 'idle-within-max', 'borrow-timeout']) expect([id, modulesOfRule(id)]).toEqual([id, ['rds-proxy', 'pgbouncer-proxy']]);
    const input = { maxIdleConnectionsPercent: 60, maxConnectionsPercent: 50 };
    expect(terraformMessages('pgbouncer-proxy', input)).toEqual(terraformMessages('rds-proxy', input));
    expect(terraformMessages('pgbouncer-proxy', input)).toEqual(['max_idle_connections_percent 60 exceeds max_connections_percent 50: set it to 50 or less']);
  });

  test('a rule that exists in Terraform only says why', () => {
    for (const rule of rules.filter((r) => r.terraformOnly !== undefined)) expect([rule.id, rule.terraformOnly!.length > 20]).toEqual([rule.id, true]);
  });

  test('Terraform messages name the module\'s variables, CDK messages the props', () => {
    const messages = terraformMessages('rds-proxy', { maxConnectionsPercent: 150 });
    expect(messages).toEqual(['max_connections_percent 150 is out of range: set the share of the target\'s max_connections the proxy may use (an integer from 1 to 100)']);
    expect(fs.readFileSync(path.join(ROOT, 'modules/rds-proxy/variables.tf'), 'utf8')).toContain(
      'error_message = "max_connections_percent ${var.max_connections_percent} is out of range: set the share of the target\'s max_connections the proxy may use (an integer from 1 to 100)"',
    );
  });
});

describe('shared vectors in terraform test', () => {
  const expectations = vectorExpectations();

  test('every vector becomes a run in each module that states its rule', () => {
    expect(expectations).toHaveLength(loadVectors().reduce((n, v) => n + modulesOfRule(v.rule).length, 0));
    expect(expectations.filter((e) => e.vector.rule === 'fleet-tcp-idle-timeout').map((e) => e.module)).toEqual(Array(6).fill('pgbouncer-proxy'));
    const pool = expectations.filter((e) => e.vector.rule === 'borrow-timeout');
    expect(pool.filter((e) => e.module === 'pgbouncer-proxy')).toHaveLength(pool.length / 2);
  });

  test('a vector keeps its verdict once the module defaults fill in, or the run says why', () => {
    // Only where a default completes a multi-property rule may the module's verdict differ from the
    // vector's (e.g. engineVersion 14.6 alone is "deprecated"; with the default db.r6gd.xlarge it is below the floor).
    const differing = expectations.filter((e) => (e.vector.accepted ? e.messages.length > 0 : !e.messages.includes(e.vector.message!)));
    expect(differing.map((e) => `${e.module}: ${e.vector.rule} ${JSON.stringify(e.vector.input)}`)).toEqual([
      'aurora-optimized-reads: engine-version {"engineVersion":"14.6"}',
      'rds-proxy: max-connections-percent {"maxConnectionsPercent":1}',
      'pgbouncer-proxy: max-connections-percent {"maxConnectionsPercent":1}',
    ]);
  });

  test('every rejected vector expects a failure', () => {
    for (const e of expectations.filter((x) => !x.vector.accepted)) expect([e.vector.rule, e.failures.length > 0]).toEqual([e.vector.rule, true]);
  });
});

describe('module defaults are the model\'s', () => {
  const defaults = (m: string) => variableDefaults(path.join(ROOT, 'modules', m));

  test('engine version', () => {
    expect(defaults('aurora-optimized-reads').engine_version).toBe(DEFAULT_ENGINE_VERSION);
  });

  test('automatic minor upgrades', () => {
    expect(defaults('aurora-optimized-reads').auto_minor_version_upgrade).toBe(DEFAULT_AUTO_MINOR_VERSION_UPGRADE);
  });

  test('turning automatic minor upgrades on warns at plan with the message CDK gives at synth', () => {
    const main = fs.readFileSync(path.join(ROOT, 'modules', 'aurora-optimized-reads', 'main.tf'), 'utf8');
    const message = autoMinorVersionUpgradeWarning('${var.engine_version}', { engineVersion: 'engine_version', autoMinorVersionUpgrade: 'auto_minor_version_upgrade' });
    expect(main).toContain(`condition     = !var.auto_minor_version_upgrade\n    error_message = "${message}"`);
  });

  test.each(POOL_SETTINGS_MODULES)('GIVEN %s WHEN its pool variables\' defaults are read THEN they are the model\'s', (m) => {
    const d = variableDefaults(path.join(ROOT, 'modules', m), moduleRegions(m));
    expect({
      maxConnectionsPercent: d.max_connections_percent,
      maxIdleConnectionsPercent: d.max_idle_connections_percent,
      connectionBorrowTimeoutSeconds: d.connection_borrow_timeout_seconds,
    }).toEqual(DEFAULT_POOL_SETTINGS);
  });

  test('GIVEN both proxies WHEN their variables.tf are read THEN the pool variables are one generated declaration: same type, default and validations, worded for each engine', () => {
    const declarations = POOL_SETTINGS_MODULES.map((m) => {
      const text = fs.readFileSync(path.join(ROOT, 'modules', m, 'variables.tf'), 'utf8');
      const region = /^# BEGIN generated pool-settings .*\n([\s\S]*?)^# END generated pool-settings$/m.exec(text)?.[1] ?? '';
      // Everything but the description is the same text in both modules.
      return { names: parseVariables(region).map((v) => v.name), body: region.replace(/^ {2}description = .*$/gm, '') };
    });
    expect(declarations[0]!.names).toEqual(Object.values(POOL_VARIABLES));
    expect(declarations[1]).toEqual(declarations[0]);
    expect(declarations[0]!.body.match(/validation \{/g)).toHaveLength(3);
  });

  test('the session listeners\' share of the budget', () => {
    expect(defaults('pgbouncer-proxy').session_max_connections_percent).toBe(DEFAULT_SESSION_MAX_CONNECTIONS_PERCENT);
  });

  test('alarm thresholds', () => {
    const text = fs.readFileSync(path.join(ROOT, 'modules/dashboard/variables.tf'), 'utf8');
    for (const [name, value] of Object.entries(DEFAULT_ALARM_THRESHOLDS)) {
      const snake = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
      expect(text).toMatch(new RegExp(`^\\s+${snake}\\s+= optional\\(number, ${value}\\)$`, 'm'));
    }
  });
});

/** A module's .tf text, with that of every local module it calls (source = "../..."). */
function tfWithCalledModules(dir: string, seen = new Set<string>()): string {
  if (seen.has(dir)) return '';
  seen.add(dir);
  const text = fs.readdirSync(dir).filter((f) => f.endsWith('.tf')).map((f) => fs.readFileSync(path.join(dir, f), 'utf8')).join('\n');
  const called = [...text.matchAll(/^\s*source\s*=\s*"(\.\.?\/[^"]+)"/gm)].map((m) => path.resolve(dir, m[1]!));
  return [text, ...called.map((d) => tfWithCalledModules(d, seen))].join('\n');
}

const versionKey = (v: string) => v.split('.').map(Number);
const newer = (a: string, b: string) => (versionKey(a)[0]! - versionKey(b)[0]! || versionKey(a)[1]! - versionKey(b)[1]!) > 0;

/**
 * The hashicorp/aws floor a module needs: the base version, or the release that added an argument it (or a module
 * it calls) sets (AWS fact aws-provider-db-proxy-default-auth-scheme).
 */
function providerFloor(dir: string): string {
  const tf = tfWithCalledModules(dir);
  return PROVIDER_ARGUMENT_FLOORS.filter((f) => new RegExp(`^resource "${f.resource}" "[^"]+" \\{[\\s\\S]*?^\\s+${f.argument}\\s*=`, 'm').test(tf)).reduce(
    (floor, f) => (newer(f.version, floor) ? f.version : floor),
    AWS_PROVIDER_BASE_VERSION,
  );
}

describe('hashicorp/aws floors (aws-provider-db-proxy-default-auth-scheme)', () => {
  test('GIVEN the provider arguments newer than the base WHEN the modules are read THEN the RDS Proxy module and the examples that call it need 6.15, the other modules the base', () => {
    const floors = Object.fromEntries([...MODULES, ...INTERNAL_MODULES, ...EXAMPLES].map((m) => [m, providerFloor(path.join(ROOT, 'modules', m))]));
    expect(Object.entries(floors).filter(([, v]) => v !== AWS_PROVIDER_BASE_VERSION)).toEqual([
      ['rds-proxy', '6.15'],
      ['examples/complete', '6.15'],
      ['examples/minimal', '6.15'],
    ]);
  });

  test.each([...MODULES, ...INTERNAL_MODULES, ...EXAMPLES])('GIVEN %s WHEN its terraform block is read THEN it requires hashicorp/aws at its floor, no lower', (module) => {
    const dir = path.join(ROOT, 'modules', module);
    const terraformBlock = fs.readdirSync(dir).filter((f) => f.endsWith('.tf')).map((f) => fs.readFileSync(path.join(dir, f), 'utf8')).find((t) => /^terraform \{/m.test(t))!;
    expect(terraformBlock).toMatch(new RegExp(`source\\s+= "hashicorp/aws"\\s+version = ">= ${providerFloor(dir).replace('.', '\\.')}"`));
  });
});

describe.each(MODULES)('module %s', (module) => {
  const dir = path.join(ROOT, 'modules', module);
  const variables = parseVariables(fs.readFileSync(path.join(dir, 'variables.tf'), 'utf8'));
  const outputs = parseOutputs(fs.readFileSync(path.join(dir, 'outputs.tf'), 'utf8'));
  const readme = fs.readFileSync(path.join(dir, 'README.md'), 'utf8');

  test('has main.tf, variables.tf, outputs.tf, versions.tf and README.md', () => {
    for (const f of ['main.tf', 'variables.tf', 'outputs.tf', 'versions.tf', 'README.md']) expect([f, fs.existsSync(path.join(dir, f))]).toEqual([f, true]);
  });

  test('requires Terraform >= 1.5 in versions.tf', () => {
    const versions = fs.readFileSync(path.join(dir, 'versions.tf'), 'utf8');
    expect(versions).toMatch(/required_version = ">= 1\.5"/);
  });

  test('every variable is typed and described, every output described', () => {
    for (const v of variables) expect([v.name, v.type !== 'any', v.description.length > 10]).toEqual([v.name, true, true]);
    for (const o of outputs) expect([o.name, o.description.length > 10]).toEqual([o.name, true]);
  });

  test('the README lists every input and output', () => {
    for (const v of variables) expect(readme).toContain(`| <a name="input_${v.name}"></a> [`);
    for (const o of outputs) expect(readme).toContain(`| <a name="output_${o.name}"></a> [`);
  });

  test('every checkov skip gives its reason', () => {
    for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.tf'))) {
      for (const line of fs.readFileSync(path.join(dir, f), 'utf8').split('\n').filter((l) => l.includes('checkov:skip'))) {
        expect([f, line.trim()]).toEqual([f, expect.stringMatching(/#checkov:skip=CKV2?_AWS_\d+:.{30,}/)]);
      }
    }
  });
});

describe.each([...MODULES, ...INTERNAL_MODULES, ...EXAMPLES])('README of %s', (module) => {
  const dir = path.join(ROOT, 'modules', module);
  const readme = fs.existsSync(path.join(dir, 'README.md')) ? fs.readFileSync(path.join(dir, 'README.md'), 'utf8') : '';
  const tf = fs.readdirSync(dir).filter((f) => f.endsWith('.tf')).map((f) => fs.readFileSync(path.join(dir, f), 'utf8')).join('\n');
  const section = (name: string) => readme.slice(readme.indexOf(`## ${name}\n`), readme.indexOf('\n## ', readme.indexOf(`## ${name}\n`) + 1));

  test('has the sections terraform-docs writes, in its order, between its markers, then the kit\'s Rules', () => {
    const docs = readme.slice(readme.indexOf('<!-- BEGIN_TF_DOCS -->'), readme.indexOf('<!-- END_TF_DOCS -->'));
    expect([...docs.matchAll(/^## (.+)$/gm)].map((m) => m[1])).toEqual(['Requirements', 'Providers', 'Modules', 'Resources', 'Inputs', 'Outputs']);
    expect(readme.indexOf('## Rules\n')).toBeGreaterThan(readme.indexOf('<!-- END_TF_DOCS -->'));
    expect(section('Rules')).toMatch(/<!-- BEGIN_KIT_RULES -->[\s\S]*<!-- END_KIT_RULES -->/);
  });

  // What .terraform-docs.yml must keep: the constraints (not a lock file's versions), the module calls, and data sources beside resources.
  test('lists the Terraform and provider version constraints, every module call, resource and data source', () => {
    expect(section('Requirements')).toContain('| <a name="requirement_terraform"></a> [terraform](#requirement\\_terraform) | >= 1.5 |');
    const floor = providerFloor(dir);
    expect(section('Requirements')).toContain(`| <a name="requirement_aws"></a> [aws](#requirement\\_aws) | >= ${floor} |`);
    expect(section('Providers')).toContain(`| <a name="provider_aws"></a> [aws](#provider\\_aws) | >= ${floor} |`);
    for (const [, name, source] of tf.matchAll(/^module "([^"]+)" \{\n\s*source\s*=\s*"([^"]+)"/gm)) expect(section('Modules')).toContain(`| <a name="module_${name}"></a> [${name.replace(/_/g, '\\_')}](#module\\_${name.replace(/_/g, '\\_')}) | ${source} |`);
    for (const [, mode, type, name] of tf.matchAll(/^(resource|data) "([^"]+)" "([^"]+)" \{\}?$/gm)) {
      const kind = mode === 'data' ? 'data-sources' : 'resources';
      expect(section('Resources')).toContain(`| [${type}.${name}](https://registry.terraform.io/providers/hashicorp/aws/latest/docs/${kind}/${type.replace(/^aws_/, '')}) | ${mode === 'data' ? 'data source' : 'resource'} |`);
    }
  });
});
