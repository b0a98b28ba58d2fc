import {
  DEFAULT_ENGINE_VERSION,
  INSTANCE_CLASS_CATALOG,
  InstanceClassSpec,
  OptimizedReadsSizing,
  PoolSettings,
  PoolSizing,
  RESERVED_CONNECTIONS,
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
   * Aurora PostgreSQL's default `max_connections` for an instance class: LEAST(DBInstanceClassMemory / 9531392, 5000),
   * where DBInstanceClassMemory is below the class's memory. AWS's published value for the class or one of
   * its memory and architecture, the cap where it applies, or a deduction from AWS's table otherwise.
   */
  public static defaultMaxConnections(instanceClass: InstanceClassSpec): number {
    return defaultMaxConnections(instanceClass);
  }

  /** Connections of each instance the pools leave to rdsadmin, AWS's automation, the master user and the role bootstrap. */
  public static readonly RESERVED_CONNECTIONS: number = RESERVED_CONNECTIONS;

  /**
   * Server connections a proxy pool may open to one instance with `maxConnections`: the percentages of it,
   * never past max_connections less RESERVED_CONNECTIONS; RDS Proxy applies the percentages per target, so
   * each reader behind a read-only endpoint gets the same budget.
   */
  public static poolSizing(maxConnections: number, pool: PoolSettings): PoolSizing {
    return poolSizing(maxConnections, pool);
  }

  private constructor() {}
}
