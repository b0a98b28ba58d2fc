/**
 * The seeds' published figures, the ones the bench reproduces side by side. Each names its article
 * (the copies are in /work/shared/seeds/; the originals are public blog posts).
 */
export interface SeedFigure {
  readonly source: string;
  readonly text: string;
}

const READ_ONLY = 'AWS Database Blog, "Use Amazon RDS Proxy with read-only endpoints" (seeds/rds-proxy-read-only-endpoints.txt)';
const BENCHMARKS = 'Sync Inc, "What is RDS Proxy? Exploring with benchmarks" (seeds/rds-proxy-benchmarks.txt)';
const PROXYSQL = 'Percona, "ProxySQL vs. Aurora cluster endpoints" (seeds/proxysql-vs-aurora-endpoints.txt)';

/** What RDS Proxy does with the same load, from its documentation (no seed measured it). */
const PROXY_DOCS = 'Aurora User Guide, "Avoiding pinning an RDS Proxy" (rds-proxy-pinning) and the seeds\' RDS Proxy figures (seeds/rds-proxy-benchmarks.txt)';

export const SEED_SOURCES = { read_only_endpoint: READ_ONLY, reader_added: READ_ONLY, connect_overhead: BENCHMARKS, read_write_split: PROXYSQL, transaction_pooling: PROXY_DOCS, pgbouncer_engine: 'none: the kit\'s own bounds (docs/PGBOUNCER-ENGINE.md)', engines: BENCHMARKS } as const;

export const SEED_FIGURES = {
  // Test 1: pgbench --select-only -C, 100 clients per instantiation, a new one every 10 s, db.r5.large readers.
  roConnections: { source: READ_ONLY, text: '1,066 -> 120 DB connections (avg), 8.9x fewer (article: "11 times")' },
  roCpu: { source: READ_ONLY, text: 'CPU 65% -> 18% (3.6x lower)' },
  roMemory: { source: READ_ONLY, text: 'freeable memory 1.7 -> 3.5 GB (2x more free)' },
  roTps: { source: READ_ONLY, text: 'not published (pgbench -P 1 ran, TPS not reported)' },
  roErrors: { source: READ_ONLY, text: 'not published; connections hit the 1,600 limit direct' },
  // Test 2: a reader added mid-run.
  raPerInstance: { source: READ_ONLY, text: '931 -> 35 connections per instance (26.2x fewer)' },
  raClients: { source: READ_ONLY, text: '931 -> 1,742 client connections served (1.87x)' },
  raNewReader: { source: READ_ONLY, text: 'new reader took 29 of 119 server connections (24%; others 41, 49)' },
  // Go client in the same datacenter, 1,000 sequential loops, db.r5.large.
  coQuery: { source: BENCHMARKS, text: 'query on open connection 0.50 ms -> 1.24 ms (proxy adds ~0.7 ms)' },
  coOpen: { source: BENCHMARKS, text: 'open+query 5.85 ms -> ~7.1 ms per loop (proxy 1.2x slower)' },
  coLambda: { source: BENCHMARKS, text: 'Lambda via API Gateway, connect per invocation: 128 ms -> 118 ms' },
  // sysbench read_write, Aurora cluster endpoint vs ProxySQL read/write split.
  tpPinning: { source: PROXY_DOCS, text: 'RDS Proxy pins a session that prepares statements: a server connection per client (not measured by a seed)' },
  tpCancel: { source: PROXY_DOCS, text: 'not measured by a seed; RDS Proxy adds ~0.7 ms per query and ~1.15 ms per connect (seed 001)' },
  // What no seed published about RDS Proxy, said so beside the figures measured here.
  engThroughput: { source: BENCHMARKS, text: 'not published (the seed looped one client at a time)' },
  engFailover: { source: BENCHMARKS, text: 'not measured by a seed' },
  rwThroughput: { source: PROXYSQL, text: '~13% more queries (1.13x) with the split; writer CPU relieved' },
} as const satisfies Record<string, SeedFigure>;
