import { InstanceClassSpec } from './instance-classes';

/**
 * Sizing formulas. Each is a documented Aurora or RDS Proxy rule; the kit computes them once here and
 * outputs them (CDK outputs, Terraform outputs, the rehearsal's pooler config) so users see what
 * they are buying before they deploy.
 */

const GIB = 1024 ** 3;
const GB = 1000 ** 3;

/** Aurora PostgreSQL's default `max_connections`: LEAST({DBInstanceClassMemory/9531392}, 5000). */
export const MAX_CONNECTIONS_DIVISOR = 9531392;
export const MAX_CONNECTIONS_CAP = 5000;

/**
 * Default `max_connections` of an instance class with `memoryGiB` of memory.
 *
 * DBInstanceClassMemory is the class memory less what the OS and RDS processes reserve; AWS does not
 * publish that reserve, so this uses the nominal memory and is an upper bound (a few percent high).
 */
export function defaultMaxConnections(memoryGiB: number): number {
  return Math.min(Math.floor((memoryGiB * GIB) / MAX_CONNECTIONS_DIVISOR), MAX_CONNECTIONS_CAP);
}

/** How Aurora splits an Optimized Reads instance's NVMe storage (I/O-Optimized, tiered cache on). */
export interface OptimizedReadsSizing {
  readonly instanceClass: string;
  readonly nvmeGiB: number;
  /** Twice the instance memory is given to temporary objects. */
  readonly temporaryObjectsGiB: number;
  /** About 10% of the NVMe storage is kept for internal use. */
  readonly internalGiB: number;
  /** The rest is the tiered cache that extends the buffer pool. */
  readonly tieredCacheGiB: number;
  /** Default max_connections (upper bound, see defaultMaxConnections). */
  readonly maxConnections: number;
}

/** Share of NVMe storage Aurora keeps for internal operations. */
export const NVME_INTERNAL_FRACTION = 0.1;
/** Temporary objects get this multiple of instance memory when the tiered cache is on. */
export const TEMP_OBJECTS_MEMORY_MULTIPLE = 2;

const round1 = (n: number): number => Math.round(n * 10) / 10;

export function optimizedReadsSizing(spec: InstanceClassSpec): OptimizedReadsSizing {
  const nvmeGiB = (spec.nvmeGB * GB) / GIB;
  const temporaryObjectsGiB = spec.memoryGiB * TEMP_OBJECTS_MEMORY_MULTIPLE;
  const internalGiB = nvmeGiB * NVME_INTERNAL_FRACTION;
  const tieredCacheGiB = Math.max(0, nvmeGiB - internalGiB - temporaryObjectsGiB);
  return {
    instanceClass: spec.instanceClass,
    nvmeGiB: round1(nvmeGiB),
    temporaryObjectsGiB: round1(temporaryObjectsGiB),
    internalGiB: round1(internalGiB),
    tieredCacheGiB: round1(tieredCacheGiB),
    maxConnections: defaultMaxConnections(spec.memoryGiB),
  };
}

/** RDS Proxy connection pool settings, as the kit exposes them. */
export interface PoolSettings {
  /** Share of the target's max_connections the proxy may open (1..100). */
  readonly maxConnectionsPercent: number;
  /** Share of max_connections the proxy keeps open while idle (0..maxConnectionsPercent). */
  readonly maxIdleConnectionsPercent: number;
  /** Seconds a client waits to borrow a pooled connection (0..300). */
  readonly connectionBorrowTimeoutSeconds: number;
}

/** The kit's pool defaults: RDS Proxy's own defaults for MaxConnections, a 50% idle floor, 120 s borrow. */
export const DEFAULT_POOL_SETTINGS: PoolSettings = {
  maxConnectionsPercent: 100,
  maxIdleConnectionsPercent: 50,
  connectionBorrowTimeoutSeconds: 120,
};

export interface PoolSizing {
  /** Server connections the pool may open to one instance. */
  readonly maxServerConnections: number;
  /** Server connections the pool keeps open while idle. */
  readonly maxIdleServerConnections: number;
}

/**
 * Server connections a pool may open against one instance with `maxConnections`. RDS Proxy applies
 * the percentages per target, so each reader behind a read-only endpoint gets the same budget. The
 * local rehearsal sizes PgBouncer's pool with the same function.
 */
export function poolSizing(maxConnections: number, pool: PoolSettings): PoolSizing {
  return {
    maxServerConnections: Math.floor((maxConnections * pool.maxConnectionsPercent) / 100),
    maxIdleServerConnections: Math.floor((maxConnections * pool.maxIdleConnectionsPercent) / 100),
  };
}
