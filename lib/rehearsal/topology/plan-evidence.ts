/** Where a plan uses the services the rehearsal does not run (see not-reproducible.ts), and its region. */
import { ENV_VARS } from '../../../lambda/src/environment';
import { counted, emptyEvidence, type DeploymentEvidence } from './not-reproducible';
import { valueAt } from '../../terraform/plan-json';
import type { PlanIndex, PlanResource } from './plan-index';
import type { ReferenceTracer } from './plan-references';
import type { ConsumerTopology } from './types';

export function planEvidence(index: PlanIndex, cluster: PlanResource, proxy: PlanResource | undefined, consumers: ReadonlyArray<ConsumerTopology>): DeploymentEvidence {
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
  const endpoints = index.managed('aws_vpc_endpoint').filter((v) => typeof v.values.service_name === 'string' && v.values.service_name.endsWith('.secretsmanager'));
  e.secretsManager.push(...counted(endpoints.length, 'Secrets Manager VPC endpoint'));

  e.kms.push(...counted(n('aws_kms_key'), 'KMS key'));
  if (c.storage_encrypted === true) e.kms.push('cluster storage_encrypted');

  e.cloudWatch.push(...counted(n('aws_cloudwatch_log_group'), 'log group'));
  e.cloudWatch.push(...counted(n('aws_cloudwatch_metric_alarm'), 'alarm'));
  e.cloudWatch.push(...counted(n('aws_cloudwatch_dashboard'), 'dashboard'));
  const exports = Array.isArray(c.enabled_cloudwatch_logs_exports) ? c.enabled_cloudwatch_logs_exports.map(String) : [];
  if (exports.length > 0) e.cloudWatch.push(`cluster exports ${exports.join(', ')} logs`);

  const consumerIds = new Set(consumers.map((x) => x.id));
  const traced = index.managed('aws_lambda_function').filter((f) => consumerIds.has(f.address) && valueAt(f.values, ['tracing_config', 0, 'mode']) === 'Active');
  e.xray.push(...counted(traced.length, 'consumer', 'consumers', ' with tracing_config Active'));
  return e;
}

/** The region the root module's aws provider is configured with, else what a data.aws_region read. */
export function planRegion(index: PlanIndex, tracer: ReferenceTracer): string | undefined {
  const provider = index.plan.configuration?.provider_config?.aws;
  const expression = provider?.expressions?.region;
  if (expression !== undefined) {
    const values = tracer.traceExpression([], expression).filter((t) => t.kind === 'value' && typeof t.value === 'string');
    if (values.length === 1 && values[0]!.kind === 'value') return values[0]!.value as string;
  }
  const read = index.resources.find((r) => r.mode === 'data' && r.type === 'aws_region' && (typeof r.values.region === 'string' || typeof r.values.name === 'string'));
  return read ? String(read.values.region ?? read.values.name) : undefined;
}
