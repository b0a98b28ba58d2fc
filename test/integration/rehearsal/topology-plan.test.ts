/**
 * The deployed topology read from `terraform show -json` of real plans (the offline stand-in provider):
 * modules/examples/complete with its defaults and with variables, modules/examples/minimal, and a user's
 * own root module that calls the kit's modules with existing VPCs.
 */
import * as path from 'path';
import { DEFAULT_POOL_SETTINGS, catalogMaxConnectionsPercentLeavingReserve } from '../../../lib/model';
import { settingsFromTopology, topologyFromPlan, type DeployedTopology } from '../../../lib/rehearsal';
import type { PlanOfResources } from '../../../lib/terraform/plan-json';
import { ROOT } from '../../terraform/terraform-cli';
import { COMPLETE_EXAMPLE, planFile, removeFixtures, userRootModule } from '../../rehearsal/topology-fixtures';

const RO = 'module.proxy.aws_db_proxy_endpoint.this["aurora-proxy-kit-ro"]';
const RW = 'module.proxy.aws_db_proxy_endpoint.this["aurora-proxy-kit-rw"]';
const DEFAULT = 'module.proxy.aws_db_proxy.this#default';
const READER = 'module.reader.module.function.aws_lambda_function.this';
const WRITER = 'module.writer.module.function.aws_lambda_function.this';
const DATA_VPC = 'aws_vpc.this["data"]';
const CONSUMER_VPC = 'aws_vpc.this["consumer"]';

afterAll(removeFixtures);

describe('topologyFromPlan: modules/examples/complete, default variables', () => {
  let t: DeployedTopology;
  let plan: PlanOfResources;

  beforeAll(() => {
    // GIVEN the complete example planned offline and shown as JSON
    const planned = planFile(COMPLETE_EXAMPLE);
    plan = planned.plan;
    // WHEN its topology is read
    t = topologyFromPlan(plan, planned.file);
  }, 300_000);

  test('THEN the writer is the module the readers depend on, with 2 readers, in the data VPC', () => {
    expect(t.cluster).toMatchObject({ identifier: 'aurora-proxy-kit', engine: 'aurora-postgresql', engineVersion: '17.9', port: 5432, databaseName: 'app', vpc: DATA_VPC });
    expect(t.cluster.writer).toEqual({ id: 'module.database.module.writer.aws_rds_cluster_instance.this[0]', identifier: 'aurora-proxy-kit-writer', instanceClass: 'db.r6gd.xlarge', promotionTier: 0 });
    expect(t.cluster.readers.map((r) => r.identifier)).toEqual(['aurora-proxy-kit-reader-1', 'aurora-proxy-kit-reader-2']);
  });

  test('THEN the proxy (placed through its security group\'s vpc_id, traced to the module call) is in the data VPC with the kit\'s pool', () => {
    expect(t.proxy).toMatchObject({ id: 'module.proxy.aws_db_proxy.this', name: 'aurora-proxy-kit', requireTls: true, authScheme: 'IAM_AUTH', vpc: DATA_VPC });
    // The module gives RDS Proxy the percent that leaves Aurora's reserved connections (sizing.ts).
    expect(t.proxy.pool).toEqual({ ...DEFAULT_POOL_SETTINGS, maxConnectionsPercent: catalogMaxConnectionsPercentLeavingReserve(), defaulted: [] });
    expect(t.region).toBe('us-east-1');
  });

  test('THEN 3 endpoints, the added ones placed in the consumer VPC by their consumers, which the notes say', () => {
    expect(t.endpoints).toEqual([
      { id: DEFAULT, name: 'aurora-proxy-kit', role: 'READ_WRITE', isDefault: true, vpc: DATA_VPC },
      { id: RO, name: 'aurora-proxy-kit-ro', role: 'READ_ONLY', isDefault: false, vpc: CONSUMER_VPC },
      { id: RW, name: 'aurora-proxy-kit-rw', role: 'READ_WRITE', isDefault: false, vpc: CONSUMER_VPC },
    ]);
    expect(t.notes.filter((n) => n.startsWith(`VPC of ${RO} taken from its consumer(s) ${READER}`))).toHaveLength(1);
    expect(t.notes.some((n) => n.includes('local.endpoints in the root module (plan JSON carries no local values)'))).toBe(true);
  });

  test('THEN each consumer\'s DB_HOST resolves to the one endpoint that fits its role and TLS mode, and its server name to the proxy default endpoint', () => {
    expect(t.consumers.map((c) => [c.id, c.functionName, c.vpc, c.endpoint])).toEqual([
      [READER, 'aurora-proxy-kit-reader', CONSUMER_VPC, RO],
      [WRITER, 'aurora-proxy-kit-writer', CONSUMER_VPC, RW],
    ]);
    const reader = t.consumers[0]!.environment;
    expect(reader.DB_HOST).toEqual({ kind: 'endpoint-host', endpoint: RO });
    expect(reader.DB_TLS_SERVER_NAME).toEqual({ kind: 'endpoint-host', endpoint: DEFAULT });
    expect(reader.DB_USER).toEqual({ kind: 'literal', value: 'app_reader' });
    expect(t.consumers[1]!.connection).toMatchObject({ user: 'app_writer', endpointRole: 'READ_WRITE', auth: 'iam', tls: { mode: 'verify-proxy-domain' } });
  });

  test('GIVEN the host names known, as a plan of a deployment that exists shows them, WHEN read THEN DB_HOST is matched by value, even where it contradicts the consumer\'s role', () => {
    // GIVEN the same plan with the endpoints' host names known, and the reader wired (wrongly) to the READ_WRITE endpoint
    const known = structuredClone(plan) as unknown as { resource_changes: Array<{ address: string; change: { after: Record<string, unknown>; after_unknown: Record<string, unknown> } }> };
    const hosts: Record<string, string> = {
      'module.proxy.aws_db_proxy.this': 'aurora-proxy-kit.proxy-c0ffee.us-east-1.rds.amazonaws.com',
      [RO]: 'aurora-proxy-kit-ro.endpoint.proxy-c0ffee.us-east-1.rds.amazonaws.com',
      [RW]: 'aurora-proxy-kit-rw.endpoint.proxy-c0ffee.us-east-1.rds.amazonaws.com',
    };
    for (const r of known.resource_changes) {
      if (hosts[r.address]) {
        r.change.after.endpoint = hosts[r.address];
        delete r.change.after_unknown.endpoint;
      }
      if (r.address === READER) {
        const variables = (r.change.after.environment as Array<{ variables: Record<string, string> }>)[0]!.variables;
        variables.DB_HOST = hosts[RW]!;
        variables.DB_TLS_SERVER_NAME = hosts['module.proxy.aws_db_proxy.this']!;
        (r.change.after_unknown.environment as Array<{ variables: Record<string, unknown> }>)[0]!.variables = {};
      }
    }
    // WHEN
    const withHosts = topologyFromPlan(known, 'known.json');
    // THEN the reader is reported as wired, for its handler to refuse at cold start
    const reader = withHosts.consumers.find((c) => c.id === READER)!;
    expect(reader.endpoint).toBe(RW);
    expect(reader.environment.DB_TLS_SERVER_NAME).toEqual({ kind: 'endpoint-host', endpoint: DEFAULT });
    expect(withHosts.notes.some((n) => n.startsWith(`consumer ${READER}: DB_HOST`))).toBe(false);
    expect(withHosts.notes).toContain(`consumer ${READER}: DB_ENDPOINT_ROLE=READ_ONLY but its endpoint ${RW} is READ_WRITE; its handler refuses that at cold start`);
  });

  test('THEN the rehearsal settings are 2 replicas and the default pool', () => {
    expect(settingsFromTopology(t)).toEqual({ replicas: 2, pool: { ...DEFAULT_POOL_SETTINGS, maxConnectionsPercent: catalogMaxConnectionsPercentLeavingReserve() }, port: 5432 });
  });
});

describe('topologyFromPlan: variants', () => {
  test('GIVEN -var readers=3 -var read_only_endpoints=3 -var max_connections_percent=70 WHEN read THEN 3 readers and 5 endpoints; the reader\'s endpoint is one of 3 READ_ONLY ones the plan cannot tell apart', () => {
    // GIVEN
    const { file, plan } = planFile(COMPLETE_EXAMPLE, { readers: '3', read_only_endpoints: '3', max_connections_percent: '70' });
    // WHEN
    const t = topologyFromPlan(plan, file);
    // THEN
    expect(t.cluster.readers).toHaveLength(3);
    expect(t.endpoints.map((e) => e.role).sort()).toEqual(['READ_ONLY', 'READ_ONLY', 'READ_ONLY', 'READ_WRITE', 'READ_WRITE']);
    expect(t.proxy.pool.maxConnectionsPercent).toBe(70);
    // The writer's endpoint is the only READ_WRITE one beside the default, so it is still resolved and placed.
    expect(t.consumers.find((c) => c.id === WRITER)!.endpoint).toBe(RW);
    expect(t.endpoints.find((e) => e.id === RW)!.vpc).toBe(CONSUMER_VPC);
    // The reader's endpoint is named by a key built from var.name, which plan JSON does not evaluate.
    const reader = t.consumers.find((c) => c.id === READER)!;
    expect(reader.endpoint).toBeUndefined();
    expect(reader.environment.DB_HOST).toEqual({ kind: 'unknown', detail: expect.stringMatching(/^one of .*aurora-proxy-kit-ro"\].*aurora-proxy-kit-ro2"\].*aurora-proxy-kit-ro3"\]/) });
    expect(t.endpoints.filter((e) => e.role === 'READ_ONLY').every((e) => e.vpc === undefined)).toBe(true);
    expect(settingsFromTopology(t)).toMatchObject({ replicas: 3, pool: { maxConnectionsPercent: 70 } });
  }, 300_000);

  test('GIVEN modules/examples/minimal (endpoints written inline, no consumers) WHEN read THEN every endpoint is placed through the configuration alone', () => {
    const { file, plan } = planFile(path.join(ROOT, 'modules', 'examples', 'minimal'));
    const t = topologyFromPlan(plan, file);
    expect(t.consumers).toEqual([]);
    expect(t.cluster.readers).toHaveLength(1);
    expect(t.endpoints.map((e) => [e.role, e.isDefault, e.vpc])).toEqual([
      ['READ_WRITE', true, 'aws_vpc.this'],
      ['READ_ONLY', false, 'aws_vpc.this'],
    ]);
    expect(t.vpcs).toEqual([{ id: 'aws_vpc.this', cidr: '10.30.0.0/16' }]);
    expect(t.notes.filter((n) => n.startsWith('VPC of'))).toEqual([]);
  }, 300_000);

  test('GIVEN a user\'s root module with existing VPCs and two endpoints in two VPCs WHEN read THEN known VPC ids place everything, and the consumer reaches its endpoint', () => {
    // GIVEN
    const subnets = (vpc: string) => `["subnet-0${vpc}${vpc}${vpc}${vpc}${vpc}${vpc}${vpc}${vpc}1", "subnet-0${vpc}${vpc}${vpc}${vpc}${vpc}${vpc}${vpc}${vpc}2"]`;
    const vpc = (v: string) => `vpc-0${v.repeat(16)}`;
    const dir = userRootModule(`
terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = ">= 6.0" }
  }
}

provider "aws" {
  region = "eu-west-1"
}

module "database" {
  source             = "@MODULES@/aurora-optimized-reads"
  cluster_identifier = "orders"
  vpc_id             = "${vpc('d')}"
  subnet_ids         = ${subnets('d')}
  readers            = 1
}

module "proxy" {
  source                    = "@MODULES@/rds-proxy"
  name                      = "orders"
  cluster_identifier        = module.database.cluster_identifier
  readers                   = 1
  cluster_security_group_id = module.database.security_group_id
  cluster_resource_id       = module.database.cluster_resource_id
  database_users            = ["reporter"]
  vpc_id                    = "${vpc('d')}"
  subnet_ids                = ${subnets('d')}
  max_connections_percent   = 60
  max_idle_connections_percent = 10
  endpoints = {
    reports = { vpc_id = "${vpc('a')}", subnet_ids = ${subnets('a')}, target_role = "READ_ONLY" }
    ingest  = { vpc_id = "${vpc('b')}", subnet_ids = ${subnets('b')}, target_role = "READ_WRITE" }
  }
}

module "reporter" {
  source             = "@MODULES@/lambda-consumer"
  function_name      = "orders-reporter"
  filename           = "@ZIPS@/read-handler.zip"
  vpc_id             = "${vpc('a')}"
  subnet_ids         = ${subnets('a')}
  endpoint           = module.proxy.endpoints["reports"]
  connect_arn_prefix = module.proxy.connect_arn_prefix
  db_user            = "reporter"
  database_name      = module.database.database_name
}
`);
    // WHEN
    const { file, plan } = planFile(dir);
    const t = topologyFromPlan(plan, file);
    // THEN
    expect(t.region).toBe('eu-west-1');
    expect(t.cluster.vpc).toBe(vpc('d'));
    expect(t.proxy.vpc).toBe(vpc('d'));
    expect(t.endpoints.map((e) => [e.name, e.role, e.vpc])).toEqual([
      ['orders', 'READ_WRITE', vpc('d')],
      ['ingest', 'READ_WRITE', vpc('b')],
      ['reports', 'READ_ONLY', vpc('a')],
    ]);
    expect(t.vpcs.map((v) => v.id).sort()).toEqual([vpc('a'), vpc('b'), vpc('d')]);
    expect(t.vpcs.every((v) => v.cidr === undefined)).toBe(true);
    expect(t.consumers).toHaveLength(1);
    expect(t.consumers[0]).toMatchObject({ id: 'module.reporter.module.function.aws_lambda_function.this', vpc: vpc('a'), endpoint: 'module.proxy.aws_db_proxy_endpoint.this["reports"]' });
    expect(t.proxy.pool).toMatchObject({ maxConnectionsPercent: 60, maxIdleConnectionsPercent: 10 });
    expect(t.notes.filter((n) => n.startsWith('VPC of'))).toEqual([]);
  }, 300_000);
});
