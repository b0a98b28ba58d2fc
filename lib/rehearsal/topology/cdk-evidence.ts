/** Where a cloud assembly uses the services the rehearsal does not run (see not-reproducible.ts). */
import { ENV_VARS } from '../../../lambda/src/environment';
import type { CloudAssemblyIndex, LocatedResource } from '../../cloud-assembly';
import { literalString, resolveValue, templateString } from './cfn-intrinsics';
import { counted, emptyEvidence, type DeploymentEvidence } from './not-reproducible';
import type { ConsumerTopology } from './types';

export function cdkEvidence(assembly: CloudAssemblyIndex, cluster: LocatedResource, proxy: LocatedResource | undefined, consumers: ReadonlyArray<ConsumerTopology>): DeploymentEvidence {
  const e = emptyEvidence();
  const prop = (r: LocatedResource, name: string): string | undefined => literalString(resolveValue(assembly, r.stack, r.resource.Properties?.[name]));
  const clusterProps = cluster.resource.Properties ?? {};
  const proxyProps = proxy?.resource.Properties ?? {};

  if (proxy !== undefined && prop(proxy, 'DefaultAuthScheme') === 'IAM_AUTH') e.iamAuth.push('proxy DefaultAuthScheme IAM_AUTH');
  if (prop(cluster, 'EnableIAMDatabaseAuthentication') === 'true') e.iamAuth.push('cluster EnableIAMDatabaseAuthentication');
  e.iamAuth.push(...counted(consumers.filter((c) => c.connection.auth === 'iam').length, 'consumer', 'consumers', ` with ${ENV_VARS.auth}=iam`));

  if (prop(cluster, 'ManageMasterUserPassword') === 'true') e.secretsManager.push('cluster ManageMasterUserPassword (RDS-managed master secret)');
  const proxyAuth = Array.isArray(proxyProps.Auth) ? (proxyProps.Auth as Array<{ SecretArn?: unknown }>) : [];
  e.secretsManager.push(...counted(proxyAuth.filter((a) => a.SecretArn !== undefined).length, 'proxy Auth entry', 'proxy Auth entries', ' reading a secret'));
  e.secretsManager.push(...counted(assembly.ofType('AWS::SecretsManager::Secret').length, 'secret'));
  const secretsEndpoints = assembly.ofType('AWS::EC2::VPCEndpoint').filter((v) => templateString(v.resource.Properties?.ServiceName)?.endsWith('.secretsmanager'));
  e.secretsManager.push(...counted(secretsEndpoints.length, 'Secrets Manager VPC endpoint'));

  e.kms.push(...counted(assembly.ofType('AWS::KMS::Key').length, 'KMS key'));
  if (prop(cluster, 'StorageEncrypted') === 'true') e.kms.push('cluster StorageEncrypted');

  e.cloudWatch.push(...counted(assembly.ofType('AWS::Logs::LogGroup').length, 'log group'));
  e.cloudWatch.push(...counted(assembly.ofType('AWS::CloudWatch::Alarm').length, 'alarm'));
  e.cloudWatch.push(...counted(assembly.ofType('AWS::CloudWatch::Dashboard').length, 'dashboard'));
  const exports = Array.isArray(clusterProps.EnableCloudwatchLogsExports) ? (clusterProps.EnableCloudwatchLogsExports as unknown[]).map(String) : [];
  if (exports.length > 0) e.cloudWatch.push(`cluster exports ${exports.join(', ')} logs`);

  const consumerIds = new Set(consumers.map((c) => c.id));
  const traced = assembly.ofType('AWS::Lambda::Function').filter((f) => consumerIds.has(f.id) && (f.resource.Properties?.TracingConfig as { Mode?: unknown } | undefined)?.Mode === 'Active');
  e.xray.push(...counted(traced.length, 'consumer', 'consumers', ' with TracingConfig Active'));
  return e;
}
