/**
 * The VPCs of a plan, and which VPC a resource lies in. A VPC id is rarely known at plan, so a resource's
 * network arguments (security groups, subnets, vpc_id) are followed: by known ids where there are some,
 * else through the configuration's references, until they reach an aws_vpc (or a VPC id given as a value).
 */
import type { PlanIndex, PlanResource } from './plan-index';
import { valueAt } from './plan-json';
import type { ReferenceTracer, Terminal } from './plan-references';

/** A VPC of the plan (its address), or one it names only by a known id (an existing one, passed in as a value). */
export interface PlannedVpc {
  readonly id: string;
  readonly name?: string;
  readonly cidr?: string;
}

/** The arguments that say where a resource of each type lies, most direct first. */
const NETWORK_ARGUMENTS: Readonly<Record<string, ReadonlyArray<ReadonlyArray<string | number>>>> = {
  aws_security_group: [['vpc_id']],
  aws_subnet: [['vpc_id']],
  aws_db_subnet_group: [['subnet_ids']],
  aws_rds_cluster: [['vpc_security_group_ids'], ['db_subnet_group_name']],
  aws_db_proxy: [['vpc_security_group_ids'], ['vpc_subnet_ids']],
  aws_db_proxy_endpoint: [['vpc_id'], ['vpc_security_group_ids'], ['vpc_subnet_ids']],
  aws_lambda_function: [['vpc_config', 0, 'vpc_id'], ['vpc_config', 0, 'security_group_ids'], ['vpc_config', 0, 'subnet_ids']],
};

/** Attributes by which other resources name one of these (a subnet group by its name). */
const ID_ATTRIBUTES = ['id', 'name'];

const MAX_DEPTH = 12;

/** An EC2 id (subnet-0abc…, sg-0abc…); other strings a trace reaches (for_each keys) say nothing about placement. */
const AWS_ID = /^[a-z]+-[0-9a-f]{8,}$/;

export interface VpcPlacement {
  readonly vpc?: string;
  /** Why no single VPC was found. */
  readonly problem?: string;
}

export class PlanNetwork {
  /** VPCs named only by a known id (existing ones, passed in as values). */
  private readonly external = new Map<string, PlannedVpc>();

  constructor(
    private readonly index: PlanIndex,
    private readonly tracer: ReferenceTracer,
  ) {}

  public vpcs(): PlannedVpc[] {
    const planned = this.index.managed('aws_vpc').map((v): PlannedVpc => {
      const name = valueAt(v.values, ['tags', 'Name']);
      const cidr = valueAt(v.values, ['cidr_block']);
      return { id: v.address, ...(typeof name === 'string' ? { name } : {}), ...(typeof cidr === 'string' ? { cidr } : {}) };
    });
    return [...planned, ...this.external.values()];
  }

  public vpcOf(resource: PlanResource, depth = 0): VpcPlacement {
    if (resource.type === 'aws_vpc') return { vpc: resource.address };
    if (depth > MAX_DEPTH) return { problem: 'a network reference chain too deep to follow' };
    const problems: string[] = [];
    for (const path of NETWORK_ARGUMENTS[resource.type] ?? []) {
      const known = valueAt(resource.values, path);
      // A computed attribute (an endpoint's vpc_id) has no expression: nothing to follow at plan.
      if (known === undefined && !this.tracer.hasArgument(resource, path)) continue;
      const found = known !== undefined && !containsNull(known) ? this.fromIds([known].flat(), depth) : this.fromTerminals(this.tracer.traceArgument(resource, path), depth);
      if (found.vpc !== undefined) return found;
      if (found.problem) problems.push(`${path.join('.')}: ${found.problem}`);
    }
    return { problem: problems.length > 0 ? problems.join('; ') : `${resource.type} has no network arguments` };
  }

  private fromTerminals(terminals: Terminal[], depth: number): VpcPlacement {
    const vpcs = new Set<string>();
    const problems: string[] = [];
    for (const t of terminals) {
      if (t.kind === 'dead-end') {
        problems.push(t.reason);
      } else if (t.kind === 'value') {
        // Other values an expression reads (a for_each key, a name) say nothing about placement.
        const ids = [t.value].flat().filter((v) => typeof v === 'string' && AWS_ID.test(v));
        if (ids.length === 0) continue;
        const found = this.fromIds(ids, depth);
        if (found.vpc) vpcs.add(found.vpc);
        else if (found.problem) problems.push(found.problem);
      } else {
        for (const r of this.tracer.instancesOf(t)) {
          const found = this.vpcOf(r, depth + 1);
          if (found.vpc) vpcs.add(found.vpc);
          else if (found.problem) problems.push(`${r.address}: ${found.problem}`);
        }
      }
    }
    return decide(vpcs, problems);
  }

  private fromIds(ids: unknown[], depth: number): VpcPlacement {
    const vpcs = new Set<string>();
    const problems: string[] = [];
    for (const id of ids) {
      if (typeof id !== 'string') continue;
      const resource = this.index.resources.find((r) => r.mode === 'managed' && ID_ATTRIBUTES.some((a) => r.values[a] === id) && r.type in NETWORK_ARGUMENTS);
      const vpcResource = this.index.managed('aws_vpc').find((v) => v.values.id === id);
      if (vpcResource) vpcs.add(vpcResource.address);
      else if (resource) {
        const found = this.vpcOf(resource, depth + 1);
        if (found.vpc) vpcs.add(found.vpc);
        else if (found.problem) problems.push(found.problem);
      } else if (id.startsWith('vpc-')) {
        this.external.set(id, { id });
        vpcs.add(id);
      } else if (AWS_ID.test(id)) {
        problems.push(`${id} is not a resource of the plan`);
      }
    }
    return decide(vpcs, problems);
  }
}

function containsNull(value: unknown): boolean {
  return Array.isArray(value) ? value.some((v) => v === null) : value === null;
}

function decide(vpcs: Set<string>, problems: string[]): VpcPlacement {
  if (vpcs.size === 1) return { vpc: [...vpcs][0] };
  if (vpcs.size > 1) return { problem: `it spans several VPCs (${[...vpcs].join(', ')})` };
  return { problem: problems.length > 0 ? [...new Set(problems)].join('; ') : 'nothing names a VPC' };
}
