/**
 * The topology a CDK cloud assembly (cdk.out) would deploy, read from its manifest and templates. Every
 * reference (Ref, Fn::GetAtt, Fn::Join, Fn::ImportValue across stacks) is followed structurally to the
 * resource it names (lib/cloud-assembly/intrinsics.ts); build.ts makes the topology of what is found.
 */
import { ENV_VARS } from '../../../lambda/src/environment';
import { CloudAssemblyIndex, regionOfEnvironment, type LocatedResource } from '../../cloud-assembly';
import { assemblyVpcs, literalProperty, literalString, resolveList, resolveValue, resourceOfType, templateString, vpcOfSubnets, wholeNumberProperty } from '../../cloud-assembly/intrinsics';
import { assembleTopology, buildCluster, buildProxy, compact, exactlyOne, type ClusterRecord, type GivenPool, type PoolingTier } from './build';
import { readCdkConsumers } from './cdk-consumers';
import { readCdkFleet } from './cdk-fleet';
import { consumerWiringNotes } from './consumer-contract';
import { TopologyInputError } from './errors';
import { counted, emptyEvidence, type DeploymentEvidence } from './not-reproducible';
import { readCdkRoleBootstraps } from './role-bootstrap';
import type { ClusterTopology, ConsumerTopology, DeployedTopology } from './types';

const lacks = (property: string): string => `no literal ${property}`;

export function topologyFromCdkOut(dir: string): DeployedTopology {
  const assembly = CloudAssemblyIndex.read(dir);
  const notes: string[] = [];
  const one = (type: string, need: string): LocatedResource => exactlyOne(assembly.ofType(type), (r) => r.id, type, assembly.files, need, 'synthesize an app');
  const clusterResource = one('AWS::RDS::DBCluster', 'an Aurora cluster (an AuroraOptimizedReads)');
  // The PgBouncer engine: a fleet behind an endpoint service, no RDS Proxy.
  const isFleet = assembly.ofType('AWS::RDS::DBProxy').length === 0 && assembly.ofType('AWS::EC2::VPCEndpointService').length > 0 && assembly.ofType('AWS::AutoScaling::AutoScalingGroup').length > 0;
  const proxyResource = isFleet ? undefined : one('AWS::RDS::DBProxy', 'a proxy (an RdsProxy or a PgBouncerProxy)');
  const cluster = buildCluster(clusterRecord(assembly, clusterResource), notes);
  const tier = proxyResource !== undefined ? rdsProxy(assembly, proxyResource, cluster, notes) : readCdkFleet(assembly, notes);
  const consumers = readCdkConsumers(assembly, tier.proxy, tier.endpoints, notes);
  notes.push(...consumerWiringNotes(consumers, tier.endpoints, isFleet ? 'pgbouncer' : 'rds-proxy'));
  const evidence = cdkEvidence(assembly, clusterResource, proxyResource, consumers);
  const region = regionOfEnvironment(clusterResource.stack.environment);
  if (region === undefined) notes.push(`region unknown: stack ${clusterResource.stack.name} is environment-agnostic`);
  const source = { kind: 'cdk-assembly', path: dir, stacks: assembly.stacks.map((s) => s.name) } as const;
  return assembleTopology({ source, region, cluster, tier, endpoints: tier.endpoints, vpcs: assemblyVpcs(assembly), consumers, roleBootstraps: readCdkRoleBootstraps(assembly, notes), evidence, notes });
}

function clusterRecord(assembly: CloudAssemblyIndex, cluster: LocatedResource): ClusterRecord {
  const text = (name: string): string | undefined => literalProperty(assembly, cluster, name);
  const identifier = text('DBClusterIdentifier');
  const instances = assembly.ofType('AWS::RDS::DBInstance').filter((i) => {
    const target = resolveValue(assembly, i.stack, i.resource.Properties?.DBClusterIdentifier);
    return resourceOfType(target, 'AWS::RDS::DBCluster')?.id === cluster.id || (identifier !== undefined && literalString(target) === identifier);
  });
  const subnetGroup = resourceOfType(resolveValue(assembly, cluster.stack, cluster.resource.Properties?.DBSubnetGroupName), 'AWS::RDS::DBSubnetGroup');
  return {
    id: cluster.id,
    file: cluster.stack.file,
    lacks,
    names: { instanceType: 'AWS::RDS::DBInstance', instanceClass: 'DBInstanceClass', engine: 'Engine' },
    identifier,
    engine: text('Engine'),
    engineVersion: text('EngineVersion'),
    port: wholeNumberProperty(assembly, cluster, 'Port'),
    databaseName: text('DatabaseName'),
    placement: subnetGroup ? vpcOfSubnets(assembly, subnetGroup.stack, subnetGroup.resource.Properties?.SubnetIds) : { problem: 'its DBSubnetGroupName is not a subnet group of the assembly' },
    instances: instances.map((m) => ({
      id: m.id,
      file: m.stack.file,
      identifier: literalProperty(assembly, m, 'DBInstanceIdentifier'),
      instanceClass: literalProperty(assembly, m, 'DBInstanceClass'),
      promotionTier: wholeNumberProperty(assembly, m, 'PromotionTier'),
      waitsFor: new Set([m.resource.DependsOn ?? []].flat().map((logicalId) => `${m.stack.name}/${logicalId}`)),
    })),
  };
}

/** The RDS Proxy: its settings, pool (its target group's), default endpoint and the endpoints beside it. */
function rdsProxy(assembly: CloudAssemblyIndex, proxy: LocatedResource, cluster: ClusterTopology, notes: string[]): PoolingTier {
  const text = (name: string): string | undefined => literalProperty(assembly, proxy, name);
  const name = text('DBProxyName');
  // A resource names the proxy by a Ref to it, or by its literal DBProxyName.
  const ofProxy = (type: string): LocatedResource[] =>
    assembly.ofType(type).filter((r) => {
      const value = resolveValue(assembly, r.stack, r.resource.Properties?.DBProxyName);
      return resourceOfType(value, 'AWS::RDS::DBProxy')?.id === proxy.id || literalString(value) === name;
    });
  const pool = (): GivenPool => {
    const group = ofProxy('AWS::RDS::DBProxyTargetGroup')[0];
    if (group === undefined) throw new TopologyInputError(proxy.stack.file, `no AWS::RDS::DBProxyTargetGroup for proxy ${proxy.id}`, 'rehearse needs the proxy\'s target group: register the cluster as its target (it carries the pool settings)');
    const targets = resolveList(assembly, group.stack, group.resource.Properties?.DBClusterIdentifiers);
    if (!targets.some((t) => resourceOfType(t, 'AWS::RDS::DBCluster')?.id === cluster.id || (cluster.identifier !== undefined && literalString(t) === cluster.identifier))) {
      throw new TopologyInputError(group.stack.file, `target group ${group.id} does not target cluster ${cluster.id}`, 'rehearse needs the proxy in front of the cluster: list it in DBClusterIdentifiers');
    }
    const info = (group.resource.Properties?.ConnectionPoolConfigurationInfo ?? {}) as Record<string, unknown>;
    const value = (key: string): string | undefined => literalString(resolveValue(assembly, group.stack, info[key]));
    const num = (key: string): number | undefined => (value(key) === undefined ? undefined : Number(value(key)));
    return compact({ maxConnectionsPercent: num('MaxConnectionsPercent'), maxIdleConnectionsPercent: num('MaxIdleConnectionsPercent'), connectionBorrowTimeoutSeconds: num('ConnectionBorrowTimeout'), initQuery: value('InitQuery') });
  };
  const timeout = text('IdleClientTimeout');
  const tier = buildProxy(
    {
      id: proxy.id,
      file: proxy.stack.file,
      lacks,
      names: { name: 'DBProxyName', role: 'TargetRole' },
      name,
      engineFamily: text('EngineFamily'),
      requireTls: text('RequireTLS') === 'true',
      authScheme: text('DefaultAuthScheme'),
      idleClientTimeoutSeconds: timeout === undefined ? undefined : Number(timeout),
      placement: vpcOfSubnets(assembly, proxy.stack, proxy.resource.Properties?.VpcSubnetIds),
      endpoints: ofProxy('AWS::RDS::DBProxyEndpoint').map((e) => ({
        id: e.id,
        file: e.stack.file,
        name: literalProperty(assembly, e, 'DBProxyEndpointName') ?? e.logicalId,
        // CloudFormation's TargetRole defaults to READ_WRITE.
        role: literalProperty(assembly, e, 'TargetRole') ?? 'READ_WRITE',
        placement: vpcOfSubnets(assembly, e.stack, e.resource.Properties?.VpcSubnetIds),
      })),
      pool,
    },
    notes,
  );
  for (const [id, problem] of tier.endpointVpcProblems) notes.push(`VPC of ${id} unknown: ${problem}`);
  return tier;
}

/** Where the assembly uses the services the rehearsal does not run (see not-reproducible.ts). */
function cdkEvidence(assembly: CloudAssemblyIndex, cluster: LocatedResource, proxy: LocatedResource | undefined, consumers: ReadonlyArray<ConsumerTopology>): DeploymentEvidence {
  const e = emptyEvidence();
  const clusterIs = (name: string): boolean => literalProperty(assembly, cluster, name) === 'true';
  const n = (type: string): number => assembly.ofType(type).length;
  if (proxy !== undefined && literalProperty(assembly, proxy, 'DefaultAuthScheme') === 'IAM_AUTH') e.iamAuth.push('proxy DefaultAuthScheme IAM_AUTH');
  if (clusterIs('EnableIAMDatabaseAuthentication')) e.iamAuth.push('cluster EnableIAMDatabaseAuthentication');
  e.iamAuth.push(...counted(consumers.filter((c) => c.connection.auth === 'iam').length, 'consumer', 'consumers', ` with ${ENV_VARS.auth}=iam`));

  if (clusterIs('ManageMasterUserPassword')) e.secretsManager.push('cluster ManageMasterUserPassword (RDS-managed master secret)');
  const proxyAuth = Array.isArray(proxy?.resource.Properties?.Auth) ? (proxy.resource.Properties.Auth as Array<{ SecretArn?: unknown }>) : [];
  e.secretsManager.push(...counted(proxyAuth.filter((a) => a.SecretArn !== undefined).length, 'proxy Auth entry', 'proxy Auth entries', ' reading a secret'));
  e.secretsManager.push(...counted(n('AWS::SecretsManager::Secret'), 'secret'));
  const secretsEndpoints = assembly.ofType('AWS::EC2::VPCEndpoint').filter((v) => templateString(v.resource.Properties?.ServiceName)?.endsWith('.secretsmanager'));
  e.secretsManager.push(...counted(secretsEndpoints.length, 'Secrets Manager VPC endpoint'));

  e.kms.push(...counted(n('AWS::KMS::Key'), 'KMS key'));
  if (clusterIs('StorageEncrypted')) e.kms.push('cluster StorageEncrypted');

  e.cloudWatch.push(...counted(n('AWS::Logs::LogGroup'), 'log group'), ...counted(n('AWS::CloudWatch::Alarm'), 'alarm'), ...counted(n('AWS::CloudWatch::Dashboard'), 'dashboard'));
  const exports = cluster.resource.Properties?.EnableCloudwatchLogsExports;
  if (Array.isArray(exports) && exports.length > 0) e.cloudWatch.push(`cluster exports ${exports.map(String).join(', ')} logs`);

  const consumerIds = new Set(consumers.map((c) => c.id));
  const traced = assembly.ofType('AWS::Lambda::Function').filter((f) => consumerIds.has(f.id) && (f.resource.Properties?.TracingConfig as { Mode?: unknown } | undefined)?.Mode === 'Active');
  e.xray.push(...counted(traced.length, 'consumer', 'consumers', ' with TracingConfig Active'));
  return e;
}
