/**
 * The PgBouncer engine read from a Terraform plan (modules/examples/complete-pgbouncer, planned against the
 * offline stand-in provider): the hosts' user data is the pgbouncer-proxy module's own template, found
 * through the root's module manifest as Terraform finds it, with the values Terraform planned for it, and
 * rendered by Terraform itself when a host boots.
 */
import * as fs from 'fs';
import * as path from 'path';
import { comparableTopology, deploymentFromTopology, loadTopology, topologyFromPlan, TopologyInputError, type DeployedTopology } from '../../../lib/rehearsal';
import { checkFleetRoles } from '../../../lib/rehearsal/pooler-fleet';
import { renderTemplatefile } from '../../../lib/rehearsal/terraform-templatefile';
import { BOOTSTRAP_PLACEHOLDERS, substitutePlaceholders } from '../../../lib/model/pgbouncer-bootstrap';
import { COMPLETE_PGBOUNCER_EXAMPLE, planWithModules, removeFixtures, synthesizeReferenceApp } from '../../rehearsal/topology-fixtures';

const TEMPLATE = path.join(COMPLETE_PGBOUNCER_EXAMPLE, '..', '..', 'pgbouncer-proxy', 'templates', 'bootstrap.sh.tftpl');
/** The values of the template Terraform knows only after apply: the instances' endpoints and the module's secrets. */
const KNOWN_AFTER_APPLY = ['ClusterEndpoint', 'ConsumerSecretArns', 'ReaderEndpoints', 'ServerSecretArn', 'TlsSecretArn', 'WriterInstanceEndpoint'];

let planned: ReturnType<typeof planWithModules>;
let topology: DeployedTopology;
let cdk: DeployedTopology | undefined;

/** The reference app's cdk.out with the PgBouncer engine, read once. */
function cdkTopology(): DeployedTopology {
  cdk ??= loadTopology(synthesizeReferenceApp({ proxyEngine: 'pgbouncer' }).dir);
  return cdk;
}

beforeAll(() => {
  // GIVEN a plan of complete-pgbouncer, with the module manifest of the init it was made after
  planned = planWithModules(COMPLETE_PGBOUNCER_EXAMPLE);
  // WHEN read
  topology = loadTopology(planned.file, planned.terraform);
}, 300_000);
afterAll(removeFixtures);

/** A deep copy of the plan with `edit` applied. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a plan's JSON edited in place, shape as Terraform writes it
type AnyJson = Record<string, any>;
function editedPlan(edit: (plan: AnyJson) => void): unknown {
  const copy = JSON.parse(JSON.stringify(planned.plan)) as AnyJson;
  edit(copy);
  return copy;
}

describe('a plan of complete-pgbouncer', () => {
  test('THEN the fleet is the module\'s Auto Scaling group with its desired capacity, booted from the module\'s own template', () => {
    const fleet = topology.fleet!;
    expect(fleet.id).toBe('module.pooler.aws_autoscaling_group.this');
    const group = (planned.plan.resource_changes as ReadonlyArray<{ address: string; change: { after: Record<string, unknown> | null } }>).find((r) => r.address === fleet.id)!;
    expect(fleet.hosts).toBe(group.change.after!.desired_capacity);
    expect(fleet.hosts).toBe(2);
    expect(fleet.userData).toBe(fs.readFileSync(TEMPLATE, 'utf8'));
    expect(fleet.renderer).toBe('terraform-templatefile');
  });

  test('THEN every placeholder has a value: what Terraform knows at plan as a literal, the rest known after apply', () => {
    const values = topology.fleet!.values;
    expect(Object.keys(values).sort()).toEqual(Object.values(BOOTSTRAP_PLACEHOLDERS).map((p) => p.slice(2, -1)).sort());
    expect(Object.entries(values).filter(([, v]) => v.kind !== 'literal').map(([k]) => k).sort()).toEqual(KNOWN_AFTER_APPLY);
    expect(values.FleetName).toEqual({ kind: 'literal', value: 'apk-pgbouncer' });
    expect(values.ServerUser).toEqual({ kind: 'literal', value: 'apk_pooler_reader' });
    expect(values.Hosts).toEqual({ kind: 'literal', value: '2' });
    // Terraform sends no signal: the module gives empty stack values.
    expect(values.SignalStack).toEqual({ kind: 'literal', value: '' });
  });

  test('THEN the pooling tier is the fleet: its load balancer the default endpoint, its interface endpoints in the consumer VPC with the module\'s roles', () => {
    expect(topology.proxy).toMatchObject({ id: 'module.pooler.aws_autoscaling_group.this', name: 'apk-pgbouncer', requireTls: true, pool: { maxConnectionsPercent: 100, maxIdleConnectionsPercent: 5, connectionBorrowTimeoutSeconds: 120 } });
    expect(topology.endpoints.map((e) => [e.name, e.role, e.isDefault, e.vpc])).toEqual([
      ['apk-pgbouncer', 'READ_WRITE', true, 'aws_vpc.this["data"]'],
      ['apk-pgbouncer-ro', 'READ_ONLY', false, 'aws_vpc.this["consumer"]'],
      ['apk-pgbouncer-rw', 'READ_WRITE', false, 'aws_vpc.this["consumer"]'],
    ]);
    expect(topology.consumers.map((c) => [c.id, c.endpoint, c.connection.port, c.connection.tls.mode])).toEqual([
      ['module.consumer["reader"].module.function.aws_lambda_function.this', 'module.pooler.aws_vpc_endpoint.this["apk-pgbouncer-ro"]', 5433, 'verify-full'],
      ['module.consumer["writer"].module.function.aws_lambda_function.this', 'module.pooler.aws_vpc_endpoint.this["apk-pgbouncer-rw"]', 5432, 'verify-full'],
    ]);
    expect(topology.notReproducible.map((n) => n.id)).toEqual(expect.arrayContaining(['host-image', 'load-balancer', 'aws-apis']));
    expect(topology.notReproducible.map((n) => n.id)).not.toContain('session-pinning');
  });

  test('WHEN reduced to a rehearsed deployment THEN the values known after apply are the rehearsal\'s to fill, the rest are the plan\'s', () => {
    const d = deploymentFromTopology(topology, planned.file);
    expect(Object.keys(d.fleet!.deployTime).sort()).toEqual(KNOWN_AFTER_APPLY);
    expect(d.fleet!.values).toMatchObject({ FleetName: 'apk-pgbouncer', MaxConnectionsPercent: '100', TcpIdleTimeoutSeconds: '350' });
    expect(d.fleet!.renderer).toBe('terraform-templatefile');
    // One consumer VPC (its key comes from its Name tag), holding both interface endpoints and both consumers.
    expect(d.consumerVpcs.map((v) => v.sourceId)).toEqual(['aws_vpc.this["consumer"]']);
    const vpc = d.consumerVpcs[0]!.key;
    expect(d.endpoints.map((e) => [e.name, e.vpc])).toEqual([
      ['apk-pgbouncer', 'data'],
      ['apk-pgbouncer-ro', vpc],
      ['apk-pgbouncer-rw', vpc],
    ]);
    expect(d.consumers.map((c) => [c.role, c.endpoint, c.vpc])).toEqual([
      ['READ_ONLY', 'apk-pgbouncer-ro', vpc],
      ['READ_WRITE', 'apk-pgbouncer-rw', vpc],
    ]);
  });

  test('WHEN Terraform renders the template with a host\'s values THEN it gives the bytes CloudFormation\'s Fn::Sub gives the CDK construct\'s', () => {
    const values = Object.fromEntries(Object.entries(topology.fleet!.values).map(([k, v]) => [k, v.kind === 'literal' ? v.value : `filled-${k.toLowerCase()} "quoted" \\back`]));
    const cdk = cdkTopology().fleet!;
    const scratch = fs.mkdtempSync(path.join(path.dirname(planned.file), 'render-'));
    const rendered = renderTemplatefile(topology.fleet!.userData, values, scratch);
    expect(rendered).toBe(substitutePlaceholders(cdk.userData, values));
    expect(rendered).toContain('export FLEET_NAME="apk-pgbouncer"\n');
    // The scratch root module goes with the render.
    expect(fs.readdirSync(scratch)).toEqual([]);
  }, 120_000);
});

describe('the PgBouncer engine from cdk.out and from plan.json', () => {
  test('GIVEN the reference app with the PgBouncer engine and complete-pgbouncer WHEN compared THEN the same cluster, tier, endpoints, VPCs and stand-ins', () => {
    const fromCdk = comparableTopology(cdkTopology());
    const fromPlan = comparableTopology(topology);
    for (const key of ['cluster', 'proxy', 'endpoints', 'vpcs', 'notReproducible'] as const) expect([key, fromPlan[key]]).toEqual([key, fromCdk[key]]);
    expect(fromPlan.endpoints).toEqual(['added READ_ONLY endpoint in 10.20.0.0/16', 'added READ_WRITE endpoint in 10.20.0.0/16', 'default READ_WRITE endpoint in 10.10.0.0/16']);
  }, 120_000);

  test('THEN the same consumers, but for what each flavour names a value known only at deploy by', () => {
    // An unknown value's detail is the flavour's reference (Ref ... / known after apply), by design.
    const plain = (t: DeployedTopology) => comparableTopology(t).consumers.map((c) => ({ ...c, environment: Object.fromEntries(Object.entries(c.environment).map(([k, v]) => [k, v.startsWith('unknown (') ? 'unknown' : v])) }));
    expect(plain(topology)).toEqual(plain(cdkTopology()));
    expect(plain(topology).map((c) => [c.endpoint, c.environment.DB_HOST, c.environment.DB_PORT])).toEqual([
      ['added READ_ONLY endpoint in 10.20.0.0/16', 'host of the added READ_ONLY endpoint in 10.20.0.0/16', '5433'],
      ['added READ_WRITE endpoint in 10.20.0.0/16', 'host of the added READ_WRITE endpoint in 10.20.0.0/16', '5432'],
    ]);
  }, 120_000);
});

describe('a plan the fleet cannot be read from', () => {
  test('GIVEN no module manifest where the plan was made WHEN read THEN the error names the manifest and --terraform-dir', () => {
    const elsewhere = path.dirname(planned.file);
    expect(() => topologyFromPlan(planned.plan, planned.file, { dir: elsewhere })).toThrow(TopologyInputError);
    expect(() => topologyFromPlan(planned.plan, planned.file, { dir: elsewhere })).toThrow(new RegExp(`no module manifest ${path.join(elsewhere, '.terraform', 'modules', 'modules.json').replace(/[.[\]]/g, '\\$&')}.*--terraform-dir`));
  });

  test('GIVEN a root module that does not output the module\'s bootstrap_variables WHEN read THEN the error names the output to add', () => {
    const plan = editedPlan((p) => {
      delete p.configuration.root_module.outputs.bootstrap_variables;
      delete p.output_changes.bootstrap_variables;
    });
    expect(() => topologyFromPlan(plan, planned.file, planned.terraform)).toThrow(/the root module outputs no module\.pooler\.bootstrap_variables.*add to the root module: output "bootstrap_variables" \{ value = module\.pooler\.bootstrap_variables \}/);
  });

  test('GIVEN bootstrap values without one the template substitutes WHEN read THEN the error names it', () => {
    const plan = editedPlan((p) => {
      delete p.output_changes.bootstrap_variables.after.FleetName;
    });
    expect(() => topologyFromPlan(plan, planned.file, planned.terraform)).toThrow(/output bootstrap_variables has no FleetName, which .*bootstrap\.sh\.tftpl substitutes/);
  });

  test('GIVEN a root module that does not output the module\'s endpoints WHEN read THEN the error says the roles come from it', () => {
    const plan = editedPlan((p) => {
      delete p.configuration.root_module.outputs.endpoints;
    });
    expect(() => topologyFromPlan(plan, planned.file, planned.terraform)).toThrow(/outputs no module\.pooler\.endpoints, which gives each interface endpoint its role/);
  });
});

describe('the renderer', () => {
  test('GIVEN a template referencing a value it is not given WHEN rendered THEN Terraform\'s own error is reported', () => {
    const scratch = fs.mkdtempSync(path.join(path.dirname(planned.file), 'render-'));
    expect(() => renderTemplatefile('#!/bin/sh\necho ${Missing}\n', { Given: 'x' }, scratch)).toThrow(/terraform apply of the hosts' user data failed: .*Missing/s);
  }, 60_000);
});

describe('the role bootstrap of a plan', () => {
  test('GIVEN complete-pgbouncer, whose bootstrap input waits for the secrets\' ARNs WHEN read THEN its roles come from the module\'s roles trigger, the hosts\' server role among them', () => {
    const invocation = (planned.plan.resource_changes as ReadonlyArray<{ address: string; change: { after_unknown?: Record<string, unknown> } }>).find((r) => r.address === 'module.database_roles.aws_lambda_invocation.this')!;
    expect(invocation.change.after_unknown!.input).toBe(true);
    expect(topology.roleBootstraps).toEqual([
      { id: 'module.database_roles.aws_lambda_invocation.this', roles: [{ name: 'app_reader', access: 'READ_ONLY' }, { name: 'app_writer', access: 'READ_WRITE' }, { name: 'apk_pooler_reader', access: 'READ_ONLY' }] },
    ]);
    expect(topology.fleet!.values.ServerUser).toEqual({ kind: 'literal', value: 'apk_pooler_reader' });
  });

  test('GIVEN the plan without the role-bootstrap module WHEN read THEN the deployment makes no role, and up refuses to boot hosts whose server role nothing makes', () => {
    // GIVEN: every resource of module.database_roles gone, as from a root module that does not call it
    const plan = editedPlan((p) => {
      p.resource_changes = p.resource_changes.filter((r: AnyJson) => !String(r.address).startsWith('module.database_roles.'));
    });
    // WHEN
    const without = topologyFromPlan(plan, planned.file, planned.terraform);
    const deployment = deploymentFromTopology(without, planned.file);
    // THEN
    expect(without.roleBootstraps).toEqual([]);
    expect(deployment.databaseRoles).toEqual([]);
    expect(deployment.roleBootstraps).toEqual([]);
    expect(() => checkFleetRoles(deployment, 'apk_pooler_reader')).toThrow(
      /no role bootstrap of the deployment makes the hosts' read-only server role apk_pooler_reader \(it has no role bootstrap\): on AWS the read-only listener would never log in; give the DatabaseRoleBootstrap the tier \(poolingTier\), or list apk_pooler_reader READ_ONLY in the database-role-bootstrap module's roles$/,
    );
    expect(() => checkFleetRoles(deploymentFromTopology(topology, planned.file), 'apk_pooler_reader')).not.toThrow();
  });
});
