import { type Architecture, INSTANCE_CLASS_CATALOG, type InstanceClassSpec, OPTIMIZED_READS_FAMILIES } from './instance-classes';

/**
 * Sizing formulas. Each is a documented Aurora or RDS Proxy rule; the kit computes them once here and
 * outputs them (CDK outputs, Terraform outputs, the rehearsal's pooler config) so users see what
 * they are buying before they deploy.
 */

const GIB = 1024 ** 3;
const GB = 1000 ** 3;

/** Where AWS gives Aurora PostgreSQL's max_connections formula, its per-class table and its advice on spare connections. */
export const AURORA_PG_MAX_CONNECTIONS_SOURCE =
  'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/AuroraPostgreSQL.Managing.html#AuroraPostgreSQL.Managing.MaxConnections';
/** What DBInstanceClassMemory is: the class's memory less what the OS and the RDS processes that manage the instance use. */
export const DB_PARAMETER_FORMULA_SOURCE = 'https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/USER_ParamValuesRef.html';

/** Aurora PostgreSQL's default `max_connections`: LEAST({DBInstanceClassMemory/9531392}, 5000). */
export const MAX_CONNECTIONS_DIVISOR = 9531392;
export const MAX_CONNECTIONS_CAP = 5000;

/** AWS's formula on a DBInstanceClassMemory in bytes. */
export function maxConnectionsFormula(dbInstanceClassMemoryBytes: number): number {
  return Math.min(Math.floor(dbInstanceClassMemoryBytes / MAX_CONNECTIONS_DIVISOR), MAX_CONNECTIONS_CAP);
}

/** The formula on a class's nominal memory: what the kit used to assume, above what Aurora gives wherever the cap does not apply. */
export function nominalMaxConnections(memoryGiB: number): number {
  return maxConnectionsFormula(memoryGiB * GIB);
}

/** A row of AWS's table of Aurora PostgreSQL's max_connections per class, with the class's memory and architecture. */
export interface PublishedMaxConnections {
  readonly instanceClass: string;
  readonly memoryGiB: number;
  readonly architecture: Architecture;
  readonly maxConnections: number;
}

/**
 * Rows of the table in "Maximum connections to an Aurora PostgreSQL DB instance" (Aurora User Guide,
 * AuroraPostgreSQL.Managing: AURORA_PG_MAX_CONNECTIONS_SOURCE; later versions of the page give the formula
 * without the table) for the memory-optimized classes below the cap, where DBInstanceClassMemory decides
 * the value. AWS lists none of the kit's NVMe (d) classes, whose memory is that of the class without the d.
 */
export const PUBLISHED_MAX_CONNECTIONS: ReadonlyArray<PublishedMaxConnections> = [
  { instanceClass: 'db.r6g.large', memoryGiB: 16, architecture: 'arm64', maxConnections: 1722 },
  { instanceClass: 'db.r6g.xlarge', memoryGiB: 32, architecture: 'arm64', maxConnections: 3479 },
  { instanceClass: 'db.x2g.large', memoryGiB: 32, architecture: 'arm64', maxConnections: 3479 },
  { instanceClass: 'db.r5.large', memoryGiB: 16, architecture: 'x86_64', maxConnections: 1600 },
  { instanceClass: 'db.r5.xlarge', memoryGiB: 32, architecture: 'x86_64', maxConnections: 3300 },
];

/**
 * The largest share by which a published value falls below the formula on nominal memory (db.r5.large:
 * 1600 of 1802, 11.2%): what the OS and RDS take at most, as far as AWS's table shows.
 */
export const MAX_PUBLISHED_MEMORY_DEDUCTION = Math.max(...PUBLISHED_MAX_CONNECTIONS.map((r) => 1 - r.maxConnections / nominalMaxConnections(r.memoryGiB)));

/** How the kit knows a class's max_connections. */
export type MaxConnectionsBasis =
  /** AWS's table lists the class. */
  | 'published'
  /** AWS's table lists a class of the same memory and architecture (the lowest such value). */
  | 'published-same-memory'
  /** The formula reaches the cap even on the nominal memory less MAX_PUBLISHED_MEMORY_DEDUCTION. */
  | 'capped'
  /** Nothing published: the formula on the nominal memory less MAX_PUBLISHED_MEMORY_DEDUCTION. */
  | 'deduced';

export interface ClassMaxConnections {
  readonly maxConnections: number;
  readonly basis: MaxConnectionsBasis;
  /** The published row the value comes from (published, published-same-memory). */
  readonly publishedFor?: string;
}

/**
 * Aurora PostgreSQL's default max_connections for a class: LEAST({DBInstanceClassMemory/9531392}, 5000),
 * where DBInstanceClassMemory is below the nominal memory by what AWS does not publish per class. So the
 * value is AWS's published one where AWS lists the class or one of the same memory and architecture (the
 * nearest evidence of what the OS and RDS processes take from it), the cap where any deduction AWS's table shows leaves the
 * formula above it, and otherwise the formula on the memory less the largest such deduction.
 */
export function auroraMaxConnections(spec: Pick<InstanceClassSpec, 'instanceClass' | 'memoryGiB' | 'family'>): ClassMaxConnections {
  const exact = PUBLISHED_MAX_CONNECTIONS.find((r) => r.instanceClass === spec.instanceClass);
  if (exact) return { maxConnections: exact.maxConnections, basis: 'published', publishedFor: exact.instanceClass };
  const deduced = maxConnectionsFormula(spec.memoryGiB * GIB * (1 - MAX_PUBLISHED_MEMORY_DEDUCTION));
  if (deduced === MAX_CONNECTIONS_CAP) return { maxConnections: MAX_CONNECTIONS_CAP, basis: 'capped' };
  const architecture = OPTIMIZED_READS_FAMILIES[spec.family].architecture;
  const same = PUBLISHED_MAX_CONNECTIONS.filter((r) => r.memoryGiB === spec.memoryGiB && r.architecture === architecture).sort((a, b) => a.maxConnections - b.maxConnections)[0];
  if (same) return { maxConnections: same.maxConnections, basis: 'published-same-memory', publishedFor: same.instanceClass };
  return { maxConnections: deduced, basis: 'deduced' };
}

/** Aurora PostgreSQL's default max_connections of a catalog class (auroraMaxConnections). */
export function defaultMaxConnections(spec: Pick<InstanceClassSpec, 'instanceClass' | 'memoryGiB' | 'family'>): number {
  return auroraMaxConnections(spec).maxConnections;
}

/** A part of the connections the pools leave to others, and why. */
export interface ConnectionReservePart {
  readonly id: string;
  readonly connections: number;
  readonly reason: string;
  readonly source: string;
}

/**
 * Connections of each instance no pool may take. PostgreSQL refuses an ordinary role once only the
 * reserved slots are free, and a privileged session takes an ordinary slot while one is free; so the pools
 * (ordinary roles) stay below max_connections by the reserved slots plus the privileged sessions that may
 * already hold ordinary slots.
 */
export const CONNECTION_RESERVE: ReadonlyArray<ConnectionReservePart> = [
  {
    id: 'superuser-reserved',
    connections: 3,
    reason: 'superuser_reserved_connections: slots only a superuser (on Aurora, rdsadmin) may take; PostgreSQL\'s default',
    source: 'https://www.postgresql.org/docs/current/runtime-config-connection.html#GUC-SUPERUSER-RESERVED-CONNECTIONS',
  },
  {
    id: 'rds-superuser-reserved',
    connections: 2,
    reason: 'rds.rds_superuser_reserved_connections: slots only members of rds_superuser (the master user) may take; RDS\'s default',
    source: 'https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/Appendix.PostgreSQL.CommonDBATasks.Parameters.html',
  },
  {
    id: 'aws-automation',
    connections: 3,
    reason: 'AWS asks for at least 3 connections beyond the applications\' for its automation (rdsadmin\'s sessions)',
    source: AURORA_PG_MAX_CONNECTIONS_SOURCE,
  },
  {
    id: 'master-user',
    connections: 1,
    reason: 'an operator\'s session as the master user (consumers never log in as it)',
    source: 'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/Appendix.PostgreSQL.CommonDBATasks.Roles.rds_superuser.html',
  },
  {
    id: 'role-bootstrap',
    connections: 1,
    reason: 'the role bootstrap function\'s one connection to the writer, as the master user, outside the pools',
    source: 'lambda/src/role-bootstrap.ts (one pg Client, as the master user)',
  },
];

/** Connections of each instance the pools leave to others: the sum of CONNECTION_RESERVE. */
export const RESERVED_CONNECTIONS = CONNECTION_RESERVE.reduce((sum, part) => sum + part.connections, 0);

/** What the pools of one instance may open at most: max_connections less the reserve. */
export function poolableConnections(maxConnections: number): number {
  return Math.max(0, maxConnections - RESERVED_CONNECTIONS);
}

/**
 * The largest MaxConnectionsPercent whose share of `maxConnections` leaves the reserve. RDS Proxy takes its
 * budget as a percent of max_connections and knows nothing of the reserve, so the kit gives it at most this.
 */
export function maxConnectionsPercentLeavingReserve(maxConnections: number): number {
  return Math.max(0, Math.floor((poolableConnections(maxConnections) * 100) / maxConnections));
}

/** maxConnectionsPercentLeavingReserve of the smallest max_connections in the catalog: a percent that leaves the reserve on every class. */
export function catalogMaxConnectionsPercentLeavingReserve(): number {
  return Math.min(...INSTANCE_CLASS_CATALOG.map((spec) => maxConnectionsPercentLeavingReserve(defaultMaxConnections(spec))));
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
  /** Aurora's default max_connections (auroraMaxConnections). */
  readonly maxConnections: number;
  /** How the kit knows it: published by AWS for the class or one of its memory, at the cap, or deduced. */
  readonly maxConnectionsBasis: MaxConnectionsBasis;
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
    maxConnections: defaultMaxConnections(spec),
    maxConnectionsBasis: auroraMaxConnections(spec).basis,
  };
}

/** RDS Proxy connection pool settings, as the kit exposes them. */
export interface PoolSettings {
  /** Share of the target's max_connections the proxy may open (bounds: the kit's `max-connections-percent` rule). */
  readonly maxConnectionsPercent: number;
  /** Share of max_connections the proxy keeps open while idle (0..maxConnectionsPercent). */
  readonly maxIdleConnectionsPercent: number;
  /** Seconds a client waits to borrow a pooled connection (bounds: the `borrow-timeout` rule). */
  readonly connectionBorrowTimeoutSeconds: number;
}

/**
 * The kit's pool defaults: RDS Proxy's own default for MaxConnections (the pools stop at the reserve all the
 * same, see poolSizing), a 5% idle floor, 120 s borrow. PgBouncer keeps the idle floor open on every process
 * at all times (min_pool_size), and every idle connection holds memory and CPU on the instance (Aurora User
 * Guide, AuroraPostgreSQL.Managing); 5% keeps some warm for a burst and opens the rest on demand.
 */
export const DEFAULT_POOL_SETTINGS: PoolSettings = {
  maxConnectionsPercent: 100,
  maxIdleConnectionsPercent: 5,
  connectionBorrowTimeoutSeconds: 120,
};

/**
 * RDS Proxy closes a client connection idle this long by default (IdleClientTimeout, 1,800 seconds: Amazon RDS
 * API Reference, CreateDBProxy); the construct's own default (lib/rds-proxy.ts) is the same 30 minutes.
 */
export const RDS_PROXY_DEFAULT_IDLE_CLIENT_TIMEOUT_SECONDS = 1800;

export interface PoolSizing {
  /** Server connections the pool may open to one instance. */
  readonly maxServerConnections: number;
  /** Server connections the pool keeps open while idle. */
  readonly maxIdleServerConnections: number;
  /** Connections of the instance left to others (RESERVED_CONNECTIONS): the pool never takes them. */
  readonly reservedConnections: number;
}

/**
 * Server connections a pool may open against one instance with `maxConnections`: the percentages of
 * max_connections, as RDS Proxy takes them, never past max_connections less the reserve. RDS Proxy
 * applies the percentages per target, so each reader behind a read-only endpoint gets the same budget.
 * The PgBouncer fleet and the local rehearsal size their pools with the same function; RDS Proxy is
 * given a percent that leaves the reserve (maxConnectionsPercentLeavingReserve), so the cap is what it opens.
 */
export function poolSizing(maxConnections: number, pool: PoolSettings): PoolSizing {
  const maxServerConnections = Math.min(Math.floor((maxConnections * pool.maxConnectionsPercent) / 100), poolableConnections(maxConnections));
  return {
    maxServerConnections,
    maxIdleServerConnections: Math.min(Math.floor((maxConnections * pool.maxIdleConnectionsPercent) / 100), maxServerConnections),
    reservedConnections: RESERVED_CONNECTIONS,
  };
}

/**
 * The settings RDS Proxy is given for targets with `maxConnections`: MaxConnectionsPercent at most the
 * percent that leaves the reserve (RDS Proxy's budget is a share of max_connections alone, and AWS's RDS
 * Proxy guidance is to lower it when connections must be kept for other clients and administration),
 * and the idle share at most that.
 */
export function proxyPoolSettings(maxConnections: number, pool: PoolSettings): PoolSettings {
  const maxConnectionsPercent = Math.max(1, Math.min(pool.maxConnectionsPercent, maxConnectionsPercentLeavingReserve(maxConnections)));
  return { ...pool, maxConnectionsPercent, maxIdleConnectionsPercent: Math.min(pool.maxIdleConnectionsPercent, maxConnectionsPercent) };
}
