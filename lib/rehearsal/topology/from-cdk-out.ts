/**
 * The topology a CDK cloud assembly (cdk.out) would deploy, read from its manifest and templates. Every
 * reference (Ref, Fn::GetAtt, Fn::Join, Fn::ImportValue across stacks) is followed structurally to the
 * resource it names.
 */
import { CloudAssemblyIndex, regionOfEnvironment } from '../../cloud-assembly';
import { exactlyOne, readCdkCluster } from './cdk-cluster';
import { readCdkConsumers } from './cdk-consumers';
import { cdkEvidence } from './cdk-evidence';
import { assemblyVpcs } from './cdk-network';
import { readCdkProxy } from './cdk-proxy';
import { consumerWiringNotes } from './consumer-contract';
import { isCdkFleet, readCdkFleet } from './cdk-fleet';
import { notReproducible } from './not-reproducible';
import { readCdkRoleBootstraps } from './role-bootstrap';
import type { DeployedTopology, FleetTopology, ProxyEndpointTopology, ProxyTopology } from './types';

export function topologyFromCdkOut(dir: string): DeployedTopology {
  const assembly = CloudAssemblyIndex.read(dir);
  const notes: string[] = [];
  const clusterResource = exactlyOne(assembly, 'AWS::RDS::DBCluster', 'an Aurora cluster (an AuroraOptimizedReads)');
  const engine = isCdkFleet(assembly) ? 'pgbouncer' : 'rds-proxy';
  const proxyResource = engine === 'rds-proxy' ? exactlyOne(assembly, 'AWS::RDS::DBProxy', 'a proxy (an RdsProxy or a PgBouncerProxy)') : undefined;
  const cluster = readCdkCluster(assembly, clusterResource, notes);
  const tier: { proxy: ProxyTopology; endpoints: ProxyEndpointTopology[]; fleet?: FleetTopology } = proxyResource !== undefined ? readCdkProxy(assembly, proxyResource, cluster, notes) : readCdkFleet(assembly, notes);
  const { proxy, endpoints } = tier;
  const consumers = readCdkConsumers(assembly, proxy, endpoints, notes);
  notes.push(...consumerWiringNotes(consumers, endpoints, engine));
  const evidence = cdkEvidence(assembly, clusterResource, proxyResource, consumers);
  const region = regionOfEnvironment(clusterResource.stack.environment);
  if (region === undefined) notes.push(`region unknown: stack ${clusterResource.stack.name} is environment-agnostic`);
  return {
    source: { kind: 'cdk-assembly', path: dir, stacks: assembly.stacks.map((s) => s.name) },
    ...(region !== undefined ? { region } : {}),
    cluster,
    proxy,
    endpoints,
    vpcs: assemblyVpcs(assembly),
    consumers,
    ...(tier.fleet !== undefined ? { fleet: tier.fleet } : {}),
    roleBootstraps: readCdkRoleBootstraps(assembly, notes),
    notReproducible: notReproducible(evidence, {
      engine,
      proxyName: proxy.name,
      requireTls: proxy.requireTls,
      instanceClasses: [cluster.writer, ...cluster.readers].map((i) => i.instanceClass),
      consumers,
    }),
    notes,
  };
}
