/**
 * Which of a cluster's instances is the writer. Aurora makes the first instance created in a cluster its
 * writer, and both flavours order creation explicitly (CDK: the readers DependsOn the writer; Terraform:
 * the readers' module depends_on the writer's), so the writer is the instance that waits for no other.
 * When that does not single one out, the lowest promotion tier decides, and a note says so.
 */
import type { InstanceTopology } from './types';

export interface OrderedInstance {
  readonly instance: InstanceTopology;
  /** Ids of the cluster's other instances this one is created after. */
  readonly waitsFor: ReadonlySet<string>;
}

export function splitWriter(clusterId: string, instances: ReadonlyArray<OrderedInstance>): { writer: InstanceTopology; readers: InstanceTopology[]; note?: string } {
  const first = instances.filter((i) => ![...i.waitsFor].some((id) => id !== i.instance.id && instances.some((o) => o.instance.id === id)));
  if (first.length === 1) {
    const writer = first[0]!.instance;
    return { writer, readers: instances.map((i) => i.instance).filter((i) => i !== writer) };
  }
  const pool = first.length > 0 ? first : instances;
  const tier = (i: OrderedInstance): number => i.instance.promotionTier ?? Number.MAX_SAFE_INTEGER;
  const writer = [...pool].sort((a, b) => tier(a) - tier(b))[0]!.instance;
  return {
    writer,
    readers: instances.map((i) => i.instance).filter((i) => i !== writer),
    note: `${clusterId}: no creation order singles out the writer among ${pool.map((i) => i.instance.id).join(', ')}; took ${writer.id}, the lowest promotion tier`,
  };
}
