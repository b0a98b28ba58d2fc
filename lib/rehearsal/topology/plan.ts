/**
 * The topology a Terraform plan would deploy, read from `terraform show -json <planfile>`: planned values
 * where Terraform knows them at plan, and the configuration's references where it knows them only after
 * apply (VPC placement, endpoint host names; lib/terraform/plan-references.ts, plan-network.ts). How each such
 * fact was derived is written in `notes`; build.ts makes the topology of what is found.
 */
import { dirname, resolve } from 'node:path';
import { ENV_VARS } from '../../../lambda/src/environment';
import { PlanIndex, type PlanResource } from '../../terraform/plan-index';
import { modulePrefix, valueAt, type PlanJson } from '../../terraform/plan-json';
import { PlanNetwork } from '../../terraform/plan-network';
import { planRegion, ReferenceTracer } from '../../terraform/plan-references';
import { assembleTopology, buildCluster, buildProxy, compact, exactlyOne, type ClusterRecord, type GivenPool, type PoolingTier } from './build';
import { consumerWiringNotes } from './consumer-contract';
import { TopologyInputError } from './errors';
import { counted, emptyEvidence, type DeploymentEvidence } from './not-reproducible';
import { placeEndpointsByConsumers, readPlanConsumers } from './plan-consumers';
import { readPlanFleet, type TerraformWorkingDir } from './plan-fleet';
import { readPlanRoleBootstraps } from './role-bootstrap';
import type { ClusterTopology, ConsumerTopology, DeployedTopology } from './types';

export type { TerraformWorkingDir } from './plan-fleet';

const PLAN_FIX = 'pass `terraform show -json <planfile>` output: terraform plan -out=plan.tfplan && terraform show -json plan.tfplan > plan.json';
const lacks = (property: string): string => `no ${property} known at plan`;
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** The plan's JSON as the topology needs it: a plan (not a state), that did not error, with its configuration. */
function planIndex(plan: PlanJson, file: string): PlanIndex {
  if (plan === null || typeof plan !== 'object' || Array.isArray(plan)) throw new TopologyInputError(file, 'not a JSON object', PLAN_FIX);
  if (plan.resource_changes === undefined && plan.values !== undefined) throw new TopologyInputError(file, 'state JSON, not plan JSON (it has values but no resource_changes)', PLAN_FIX);
  if (!Array.isArray(plan.resource_changes)) throw new TopologyInputError(file, 'no resource_changes', PLAN_FIX);
  if (plan.errored === true) throw new TopologyInputError(file, 'a plan that errored', 'fix the errors `terraform plan` reports, then plan again');
  if (plan.configuration?.root_module === undefined) throw new TopologyInputError(file, 'no configuration.root_module', `${PLAN_FIX} (the configuration resolves references unknown at plan)`);
  return new PlanIndex(plan, file);
}

/**
 * `file` names the plan in messages (default `plan.json`). `terraform` is where the plan was made, for what the
 * plan JSON does not carry (the PgBouncer engine's user data template): default the plan file's directory,
 * with TF_DATA_DIR as Terraform reads it.
 */
export function topologyFromPlan(planJson: unknown, file = 'plan.json', terraform?: TerraformWorkingDir): DeployedTopology {
  const index = planIndex(planJson as PlanJson, file);
  const tracer = new ReferenceTracer(index);
  const network = new PlanNetwork(index, tracer);
  const notes: string[] = [];
  const one = (type: string, need: string): PlanResource => exactlyOne(index.managed(type), (r) => r.address, type, index.file, need, 'plan a configuration');
  const clusterResource = one('aws_rds_cluster', 'an Aurora cluster (the aurora-optimized-reads module)');
  // The PgBouncer engine: a fleet behind an endpoint service, no RDS Proxy.
  const isFleet = index.managed('aws_db_proxy').length === 0 && index.managed('aws_vpc_endpoint_service').length > 0 && index.managed('aws_autoscaling_group').length > 0;
  const engine = isFleet ? 'pgbouncer' : 'rds-proxy';
  const proxyResource = isFleet ? undefined : one('aws_db_proxy', 'a proxy (the rds-proxy module or the pgbouncer-proxy module)');
  const cluster = buildCluster(clusterRecord(index, clusterResource, network), notes);
  const tier = proxyResource !== undefined ? rdsProxy(index, proxyResource, cluster, network, notes) : readPlanFleet(index, tracer, network, cluster, terraform ?? defaultWorkingDir(file), notes);
  const consumers = readPlanConsumers({ index, tracer, network, proxy: tier.proxy, endpoints: tier.endpoints, notes, engine, planDir: dirname(resolve(file)) });
  const endpoints = placeEndpointsByConsumers(tier.endpoints, consumers, tier.endpointVpcProblems, notes);
  notes.push(...consumerWiringNotes(consumers, endpoints, engine));
  const region = planRegion(index, tracer);
  if (region === undefined) notes.push('region unknown: the aws provider\'s region is not known at plan');
  const source = compact({ kind: 'terraform-plan', path: file, terraformVersion: index.plan.terraform_version || undefined } as const);
  const vpcs = network.vpcs();
  const roleBootstraps = readPlanRoleBootstraps(index, notes);
  return assembleTopology({ source, region, cluster, tier, endpoints, vpcs, consumers, roleBootstraps, evidence: planEvidence(index, clusterResource, proxyResource, consumers), notes });
}

/** Terraform's own defaults: the directory it ran in (here, the plan file's) and TF_DATA_DIR when set. */
function defaultWorkingDir(file: string): TerraformWorkingDir {
  const dataDir = process.env.TF_DATA_DIR;
  return { dir: resolve(dirname(file)), ...(dataDir !== undefined && dataDir !== '' ? { dataDir } : {}) };
}

function clusterRecord(index: PlanIndex, cluster: PlanResource, network: PlanNetwork): ClusterRecord {
  const v = cluster.values;
  const identifier = str(v.cluster_identifier);
  // An instance's cluster_identifier is usually known only after apply; one that is known must match.
  const members = index.managed('aws_rds_cluster_instance').filter((i) => {
    const target = str(i.values.cluster_identifier);
    return target === undefined || target === identifier;
  });
  // The absolute configuration addresses an instance is created after: its own depends_on and its enclosing module calls'.
  const dependsOn = (r: PlanResource): string[] => [
    ...(r.config?.depends_on ?? []).map((d) => `${modulePrefix(r.modulePath)}${d}`),
    ...r.modulePath.flatMap((_, i) => (index.moduleCall(r.modulePath.slice(0, i + 1))?.depends_on ?? []).map((d) => `${modulePrefix(r.modulePath.slice(0, i))}${d}`)),
  ];
  const within = (address: string, prefix: string): boolean => address === prefix || address.startsWith(`${prefix}.`) || address.startsWith(`${prefix}[`);
  const configAddress = (r: PlanResource): string => `${modulePrefix(r.modulePath)}${r.type}.${r.name}`;
  return {
    id: cluster.address,
    file: index.file,
    lacks,
    names: { instanceType: 'aws_rds_cluster_instance', instanceClass: 'instance_class', engine: 'engine' },
    identifier,
    engine: str(v.engine),
    engineVersion: str(v.engine_version),
    port: num(v.port),
    databaseName: str(v.database_name),
    placement: network.vpcOf(cluster),
    instances: members.map((m) => {
      const deps = dependsOn(m);
      const waitsFor = new Set(members.filter((o) => o !== m && deps.some((d) => within(configAddress(o), d) || within(o.address, d))).map((o) => o.address));
      return { id: m.address, file: index.file, identifier: str(m.values.identifier), instanceClass: str(m.values.instance_class), promotionTier: num(m.values.promotion_tier), waitsFor };
    }),
  };
}

/** The RDS Proxy: its settings, pool (its default target group's), default endpoint and the endpoints beside it. */
function rdsProxy(index: PlanIndex, proxy: PlanResource, cluster: ClusterTopology, network: PlanNetwork, notes: string[]): PoolingTier {
  const v = proxy.values;
  const name = str(v.name);
  // Resources whose `db_proxy_name` is the proxy's, or not known until apply (the plan has one proxy).
  const ofProxy = (type: string): PlanResource[] => index.managed(type).filter((r) => str(r.values.db_proxy_name) === undefined || str(r.values.db_proxy_name) === name);
  const pool = (): GivenPool => {
    const group = ofProxy('aws_db_proxy_default_target_group')[0];
    if (!group) throw new TopologyInputError(index.file, `no aws_db_proxy_default_target_group for proxy ${proxy.address}`, 'rehearse needs the proxy\'s default target group (it carries the pool settings)');
    const ofCluster = ofProxy('aws_db_proxy_target').filter((t) => str(t.values.db_cluster_identifier) === undefined || str(t.values.db_cluster_identifier) === cluster.identifier);
    if (ofCluster.length === 0) throw new TopologyInputError(index.file, `no aws_db_proxy_target registering cluster ${cluster.id} with proxy ${proxy.address}`, 'rehearse needs the proxy in front of the cluster: register it as the target');
    const config = (valueAt(group.values, ['connection_pool_config', 0]) ?? {}) as Record<string, unknown>;
    return compact({ maxConnectionsPercent: num(config.max_connections_percent), maxIdleConnectionsPercent: num(config.max_idle_connections_percent), connectionBorrowTimeoutSeconds: num(config.connection_borrow_timeout), initQuery: str(config.init_query) });
  };
  return buildProxy(
    {
      id: proxy.address,
      file: index.file,
      lacks,
      names: { name: 'name', role: 'target_role' },
      name,
      engineFamily: str(v.engine_family),
      requireTls: v.require_tls === true,
      authScheme: str(v.default_auth_scheme),
      idleClientTimeoutSeconds: num(v.idle_client_timeout),
      placement: network.vpcOf(proxy),
      endpoints: ofProxy('aws_db_proxy_endpoint').map((e) => ({
        id: e.address,
        file: index.file,
        name: str(e.values.db_proxy_endpoint_name) ?? e.address,
        // The provider's target_role defaults to READ_WRITE.
        role: str(e.values.target_role) ?? 'READ_WRITE',
        placement: network.vpcOf(e),
      })),
      pool,
    },
    notes,
  );
}

/** Where the plan uses the services the rehearsal does not run (see not-reproducible.ts). */
function planEvidence(index: PlanIndex, cluster: PlanResource, proxy: PlanResource | undefined, consumers: ReadonlyArray<ConsumerTopology>): DeploymentEvidence {
  const e = emptyEvidence();
  const c = cluster.values;
  const n = (type: string): number => index.managed(type).length;
  if (proxy?.values.default_auth_scheme === 'IAM_AUTH') e.iamAuth.push('proxy default_auth_scheme IAM_AUTH');
  if (c.iam_database_authentication_enabled === true) e.iamAuth.push('cluster iam_database_authentication_enabled');
  e.iamAuth.push(...counted(consumers.filter((x) => x.connection.auth === 'iam').length, 'consumer', 'consumers', ` with ${ENV_VARS.auth}=iam`));

  if (c.manage_master_user_password === true) e.secretsManager.push('cluster manage_master_user_password (RDS-managed master secret)');
  const auth = (Array.isArray(proxy?.values.auth) ? proxy.values.auth : []) as Array<{ secret_arn?: unknown }>;
  e.secretsManager.push(...counted(auth.filter((a) => a.secret_arn !== undefined && a.secret_arn !== null).length, 'proxy auth block', 'proxy auth blocks', ' reading a secret'));
  e.secretsManager.push(...counted(n('aws_secretsmanager_secret'), 'secret'));
  const endpoints = index.managed('aws_vpc_endpoint').filter((v) => str(v.values.service_name)?.endsWith('.secretsmanager'));
  e.secretsManager.push(...counted(endpoints.length, 'Secrets Manager VPC endpoint'));

  e.kms.push(...counted(n('aws_kms_key'), 'KMS key'));
  if (c.storage_encrypted === true) e.kms.push('cluster storage_encrypted');

  e.cloudWatch.push(...counted(n('aws_cloudwatch_log_group'), 'log group'), ...counted(n('aws_cloudwatch_metric_alarm'), 'alarm'), ...counted(n('aws_cloudwatch_dashboard'), 'dashboard'));
  const exports = Array.isArray(c.enabled_cloudwatch_logs_exports) ? c.enabled_cloudwatch_logs_exports.map(String) : [];
  if (exports.length > 0) e.cloudWatch.push(`cluster exports ${exports.join(', ')} logs`);

  const consumerIds = new Set(consumers.map((x) => x.id));
  const traced = index.managed('aws_lambda_function').filter((f) => consumerIds.has(f.address) && valueAt(f.values, ['tracing_config', 0, 'mode']) === 'Active');
  e.xray.push(...counted(traced.length, 'consumer', 'consumers', ' with tracing_config Active'));
  return e;
}
