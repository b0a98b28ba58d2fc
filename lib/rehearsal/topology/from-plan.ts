/**
 * The topology a Terraform plan would deploy, read from `terraform show -json <planfile>`: planned values
 * where Terraform knows them at plan, and the configuration's references where it knows them only after
 * apply (VPC placement, endpoint host names). How each such fact was derived is written in `notes`.
 */
import { dirname, resolve } from 'node:path';
import { consumerWiringNotes } from './consumer-contract';
import { pgBouncerEngineNotModelled } from './errors';
import { notReproducible } from './not-reproducible';
import { exactlyOnePlanned, readPlanCluster } from './plan-cluster';
import { placeEndpointsByConsumers, readPlanConsumers } from './plan-consumers';
import { planEvidence, planRegion } from './plan-evidence';
import { PlanIndex, type PlanJson } from './plan-json';
import { PlanNetwork } from './plan-network';
import { readPlanProxy } from './plan-proxy';
import { ReferenceTracer } from './plan-references';
import type { DeployedTopology } from './types';

/** `file` names the plan in messages (default `plan.json`). */
export function topologyFromPlan(planJson: unknown, file = 'plan.json'): DeployedTopology {
  const index = new PlanIndex(planJson as PlanJson, file);
  const tracer = new ReferenceTracer(index);
  const network = new PlanNetwork(index, tracer);
  const notes: string[] = [];
  const clusterResource = exactlyOnePlanned(index, 'aws_rds_cluster', 'an Aurora cluster (the aurora-optimized-reads module)');
  if (index.managed('aws_db_proxy').length === 0 && index.managed('aws_vpc_endpoint_service').length > 0 && index.managed('aws_autoscaling_group').length > 0) {
    throw pgBouncerEngineNotModelled(index.file);
  }
  const proxyResource = exactlyOnePlanned(index, 'aws_db_proxy', 'a proxy (the pooling-proxy module)');
  const cluster = readPlanCluster(index, clusterResource, network, notes);
  const planned = readPlanProxy(index, proxyResource, cluster, network, notes);
  const consumers = readPlanConsumers({ index, tracer, network, proxy: planned.proxy, endpoints: planned.endpoints, notes, planDir: dirname(resolve(file)) });
  const endpoints = placeEndpointsByConsumers(planned.endpoints, consumers, planned.endpointVpcProblems, notes);
  notes.push(...consumerWiringNotes(consumers, endpoints));
  const region = planRegion(index, tracer);
  if (region === undefined) notes.push('region unknown: the aws provider\'s region is not known at plan');
  return {
    source: { kind: 'terraform-plan', path: file, ...(index.plan.terraform_version ? { terraformVersion: index.plan.terraform_version } : {}) },
    ...(region !== undefined ? { region } : {}),
    cluster,
    proxy: planned.proxy,
    endpoints,
    vpcs: network.vpcs(),
    consumers,
    notReproducible: notReproducible(planEvidence(index, clusterResource, proxyResource, consumers), {
      proxyName: planned.proxy.name,
      requireTls: planned.proxy.requireTls,
      instanceClasses: [cluster.writer, ...cluster.readers].map((i) => i.instanceClass),
      consumers,
    }),
    notes,
  };
}
