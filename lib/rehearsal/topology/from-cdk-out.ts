/**
 * The topology a CDK cloud assembly (cdk.out) would deploy, read from its manifest and templates. Every
 * reference (Ref, Fn::GetAtt, Fn::Join, Fn::ImportValue across stacks) is followed structurally to the
 * resource it names.
 */
import { CloudAssemblyIndex, regionOfEnvironment } from './cdk-assembly';
import { exactlyOne, readCdkCluster } from './cdk-cluster';
import { readCdkConsumers } from './cdk-consumers';
import { cdkEvidence } from './cdk-evidence';
import { assemblyVpcs } from './cdk-network';
import { readCdkProxy } from './cdk-proxy';
import { consumerWiringNotes } from './consumer-contract';
import { pgBouncerEngineNotModelled } from './errors';
import { notReproducible } from './not-reproducible';
import type { DeployedTopology } from './types';

export function topologyFromCdkOut(dir: string): DeployedTopology {
  const assembly = CloudAssemblyIndex.read(dir);
  const notes: string[] = [];
  const clusterResource = exactlyOne(assembly, 'AWS::RDS::DBCluster', 'an Aurora cluster (an OptimizedReadsCluster)');
  if (assembly.ofType('AWS::RDS::DBProxy').length === 0 && assembly.ofType('AWS::EC2::VPCEndpointService').length > 0 && assembly.ofType('AWS::AutoScaling::AutoScalingGroup').length > 0) {
    throw pgBouncerEngineNotModelled(assembly.files);
  }
  const proxyResource = exactlyOne(assembly, 'AWS::RDS::DBProxy', 'a proxy (a PoolingProxy)');
  const cluster = readCdkCluster(assembly, clusterResource, notes);
  const { proxy, endpoints } = readCdkProxy(assembly, proxyResource, cluster, notes);
  const consumers = readCdkConsumers(assembly, proxy, endpoints, notes);
  notes.push(...consumerWiringNotes(consumers, endpoints));
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
    notReproducible: notReproducible(evidence, {
      proxyName: proxy.name,
      requireTls: proxy.requireTls,
      instanceClasses: [cluster.writer, ...cluster.readers].map((i) => i.instanceClass),
      consumers,
    }),
    notes,
  };
}
