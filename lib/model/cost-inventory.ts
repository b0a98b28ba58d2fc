/**
 * What a deployment runs that is billed by the hour, as the cost estimate takes it: `synth summary` reads it
 * from a cloud assembly, `plan summary` from a Terraform plan, a user of CostEstimator gives it.
 */
import { findInstanceClass } from './instance-classes';

/** Aurora's storage configurations, as CloudFormation's StorageType and Terraform's storage_type name them. */
export const AURORA_STORAGE_IO_OPTIMIZED = 'aurora-iopt1';
export const AURORA_STORAGE_STANDARD = 'aurora';

/** An interface VPC endpoint the deployment creates. */
export interface InterfaceEndpointUse {
  /** What it reaches: `PgBouncer read-write`, `secretsmanager`, ... */
  readonly service: string;
  /** It is an endpoint of the PgBouncer fleet's endpoint service (the pooling tier's own). */
  readonly pooler: boolean;
  /** Availability Zones it has a network interface in; undefined when not known at plan. */
  readonly azs?: number;
}

/** The PgBouncer fleet's hosts. */
export interface FleetHosts {
  readonly hosts: number;
  /** EC2 instance type, e.g. `c7g.large`. */
  readonly instanceType: string;
}

/** What a deployment runs that is billed by the hour, read from a template or a plan. */
export interface DeploymentInventory {
  /** The deployment's Region, when the template or plan says it. */
  readonly region?: string;
  /** The cluster's storage configuration (`aurora-iopt1` or `aurora`); undefined when there is no cluster or it is not known. */
  readonly storageType?: string;
  /** The DB instance class of each Aurora instance (writer and readers). */
  readonly instanceClasses: string[];
  /** RDS proxies in front of the cluster. */
  readonly rdsProxies: number;
  /** Endpoints of the RDS proxies besides their default ones. */
  readonly rdsProxyEndpoints: number;
  /** The PgBouncer fleet's hosts, when the deployment has one. */
  readonly fleet?: FleetHosts;
  readonly networkLoadBalancers: number;
  readonly interfaceEndpoints: InterfaceEndpointUse[];
}

/** vCPUs of the cluster's instances; undefined when a class is not in the catalog. */
export function clusterVcpus(instanceClasses: ReadonlyArray<string>): number | undefined {
  let total = 0;
  for (const cls of instanceClasses) {
    const spec = findInstanceClass(cls);
    if (!spec) return undefined;
    total += spec.vcpu;
  }
  return total;
}
