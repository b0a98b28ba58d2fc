/**
 * The topology a Terraform plan would deploy, read from `terraform show -json <planfile>`: planned values
 * where Terraform knows them at plan, and the configuration's references where it knows them only after
 * apply (VPC placement, endpoint host names). How each such fact was derived is written in `notes`.
 */
import { dirname, resolve } from 'node:path';
import { consumerWiringNotes } from './consumer-contract';
import { notReproducible } from './not-reproducible';
import { exactlyOnePlanned, readPlanCluster } from './plan-cluster';
import { placeEndpointsByConsumers, readPlanConsumers } from './plan-consumers';
import { planEvidence, planRegion } from './plan-evidence';
import { isPlanFleet, readPlanFleet, type TerraformWorkingDir } from './plan-fleet';
import type { PlanJson } from '../../terraform/plan-json';
import { PlanIndex } from './plan-index';
import { PlanNetwork } from './plan-network';
import { readPlanProxy, type PlannedProxy } from './plan-proxy';
import { ReferenceTracer } from './plan-references';
import { readPlanRoleBootstraps } from './role-bootstrap';
import type { DeployedTopology, FleetTopology } from './types';

export type { TerraformWorkingDir } from './plan-fleet';

/**
 * `file` names the plan in messages (default `plan.json`). `terraform` is where the plan was made, for what the
 * plan JSON does not carry (the PgBouncer engine's user data template): default the plan file's directory,
 * with TF_DATA_DIR as Terraform reads it.
 */
export function topologyFromPlan(planJson: unknown, file = 'plan.json', terraform?: TerraformWorkingDir): DeployedTopology {
  const index = new PlanIndex(planJson as PlanJson, file);
  const tracer = new ReferenceTracer(index);
  const network = new PlanNetwork(index, tracer);
  const notes: string[] = [];
  const clusterResource = exactlyOnePlanned(index, 'aws_rds_cluster', 'an Aurora cluster (the aurora-optimized-reads module)');
  const engine = isPlanFleet(index) ? 'pgbouncer' : 'rds-proxy';
  const proxyResource = engine === 'rds-proxy' ? exactlyOnePlanned(index, 'aws_db_proxy', 'a proxy (the rds-proxy module or the pgbouncer-proxy module)') : undefined;
  const cluster = readPlanCluster(index, clusterResource, network, notes);
  const tier: PlannedProxy & { fleet?: FleetTopology } = proxyResource !== undefined ? readPlanProxy(index, proxyResource, cluster, network, notes) : readPlanFleet(index, tracer, network, cluster, terraform ?? defaultWorkingDir(file), notes);
  const consumers = readPlanConsumers({ index, tracer, network, proxy: tier.proxy, endpoints: tier.endpoints, notes, engine, planDir: dirname(resolve(file)) });
  const endpoints = placeEndpointsByConsumers(tier.endpoints, consumers, tier.endpointVpcProblems, notes);
  notes.push(...consumerWiringNotes(consumers, endpoints, engine));
  const region = planRegion(index, tracer);
  if (region === undefined) notes.push('region unknown: the aws provider\'s region is not known at plan');
  const fleet = tier.fleet;
  return {
    source: { kind: 'terraform-plan', path: file, ...(index.plan.terraform_version ? { terraformVersion: index.plan.terraform_version } : {}) },
    ...(region !== undefined ? { region } : {}),
    cluster,
    proxy: tier.proxy,
    endpoints,
    vpcs: network.vpcs(),
    consumers,
    ...(fleet !== undefined ? { fleet } : {}),
    roleBootstraps: readPlanRoleBootstraps(index, notes),
    notReproducible: notReproducible(planEvidence(index, clusterResource, proxyResource, consumers), {
      engine,
      proxyName: tier.proxy.name,
      requireTls: tier.proxy.requireTls,
      instanceClasses: [cluster.writer, ...cluster.readers].map((i) => i.instanceClass),
      consumers,
    }),
    notes,
  };
}

/** Terraform's own defaults: the directory it ran in (here, the plan file's) and TF_DATA_DIR when set. */
function defaultWorkingDir(file: string): TerraformWorkingDir {
  const dataDir = process.env.TF_DATA_DIR;
  return { dir: resolve(dirname(file)), ...(dataDir !== undefined && dataDir !== '' ? { dataDir } : {}) };
}
