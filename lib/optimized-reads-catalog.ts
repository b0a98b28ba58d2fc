import {
  DEFAULT_ENGINE_VERSION,
  INSTANCE_CLASS_CATALOG,
  InstanceClassSpec,
  OptimizedReadsSizing,
  PoolSettings,
  PoolSizing,
  defaultMaxConnections,
  findInstanceClass,
  optimizedReadsSizing,
  poolSizing,
} from './model';

/**
 * The model's facts worth knowing before a deploy, the same ones the constructs check and size with:
 * the Optimized Reads instance classes the kit knows, the default engine version, and the sizing of an
 * instance class and of a proxy's pool. Static members rather than exported functions and constants,
 * so that every jsii language (Python) has them too.
 */
export class OptimizedReadsCatalog {
  /** Every Optimized Reads instance class the kit knows, in family then size order. */
  public static readonly INSTANCE_CLASSES: InstanceClassSpec[] = [...INSTANCE_CLASS_CATALOG];

  /** The Aurora PostgreSQL engine version a cluster gets when it names none. */
  public static readonly DEFAULT_ENGINE_VERSION: string = DEFAULT_ENGINE_VERSION;

  /** The catalog entry for a DB instance class (`db.r6gd.xlarge`), or undefined when it is not an Optimized Reads class. */
  public static findInstanceClass(instanceClass: string): InstanceClassSpec | undefined {
    return findInstanceClass(instanceClass);
  }

  /** How Aurora splits an instance class's NVMe storage (tiered cache, temporary objects) and its default max_connections. */
  public static sizing(instanceClass: InstanceClassSpec): OptimizedReadsSizing {
    return optimizedReadsSizing(instanceClass);
  }

  /**
   * Aurora PostgreSQL's default `max_connections` for `memoryGiB` of instance memory:
   * LEAST(DBInstanceClassMemory / 9531392, 5000), from the nominal memory (an upper bound).
   */
  public static defaultMaxConnections(memoryGiB: number): number {
    return defaultMaxConnections(memoryGiB);
  }

  /**
   * Server connections a proxy pool may open to one instance with `maxConnections`; RDS Proxy applies the
   * percentages per target, so each reader behind a read-only endpoint gets the same budget.
   */
  public static poolSizing(maxConnections: number, pool: PoolSettings): PoolSizing {
    return poolSizing(maxConnections, pool);
  }

  private constructor() {}
}
