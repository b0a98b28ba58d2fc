/**
 * connect_overhead (seed 001, "What is RDS Proxy?"): 1,000 sequential loops of open+query and of a
 * query on an open connection, directly to a replica and through the PgBouncer read-only endpoint,
 * both over TLS with password (SCRAM) auth. pgbench -c 1 -t N --select-only, with and without -C:
 * the per-loop time is 1000 / pgbench's tps (with -C pgbench counts the reconnection in). Then the real
 * Lambda read handler, CONNECTION_MODE per-invocation vs reuse, direct vs pooled (simulateInvocations:
 * one warm container, the cold start excluded).
 */
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client, type ClientConfig } from 'pg';
import { clientConfig, lambdaEnvironment, SCRAM_ITERATIONS, simulateInvocations, type Endpoint, type Rehearsal } from '../../rehearsal';
import { BENCH_BLOCKS } from '../blocks';
import { CREATE_TABLE_SQL } from '../../../lambda/src/schema';
import { fewerBy } from '../checks';
import type { Comparison } from '../comparison';
import { SERVER_RESET_STATEMENTS } from '../../model/pgbouncer-ini';
import { treeCpuSeconds } from '../proc';
import { runPgbench } from '../pgbench';
import { preparePgbenchData, withRehearsal } from '../scope';
import { SEED_FIGURES, SEED_SOURCES } from '../seed-figures';
import { mean, percentile, ratio, round } from '../stats';
import type { ScenarioResult } from '../types';
import type { ScenarioContext } from './context';
import { ConnectionMode, EndpointRole } from '../../../lambda/src/environment';

interface LoopFigures {
  readonly loops: number;
  readonly msPerLoop: number;
  readonly pgbenchLatencyAvgMs: number;
  readonly connectAvgMs?: number;
  /** The instance's PostgreSQL CPU (postmaster tree, /proc) per loop, when its postmaster was given. */
  readonly dbCpuMsPerLoop?: number;
  readonly errors: number;
}

interface LoopOptions {
  readonly connect?: boolean;
  /** pgbench script files instead of the built-in select-only. */
  readonly scripts?: ReadonlyArray<string>;
  /** The instance's postmaster, to count its CPU over the measured run. */
  readonly postmaster?: number;
}

async function loops(endpoint: Endpoint, n: number, o: LoopOptions = {}): Promise<LoopFigures> {
  const connect = o.connect ?? false;
  const load = { endpoint, clients: 1, connectPerTransaction: connect, ...(o.scripts === undefined ? { builtin: 'select-only' } : { scripts: o.scripts }) };
  // A short warm-up (caches, the pool's first server connection), then the measured run.
  await runPgbench({ ...load, transactions: Math.min(100, n), killAfterMs: 60000 });
  const cpu0 = o.postmaster === undefined ? undefined : treeCpuSeconds(o.postmaster);
  const r = await runPgbench({ ...load, transactions: n, killAfterMs: 120000 });
  const cpu1 = o.postmaster === undefined ? undefined : treeCpuSeconds(o.postmaster);
  return {
    loops: r.transactions,
    msPerLoop: round(r.tps > 0 ? 1000 / r.tps : Number.NaN, 4),
    pgbenchLatencyAvgMs: r.latencyAvgMs,
    ...(r.connectAvgMs === undefined ? {} : { connectAvgMs: r.connectAvgMs }),
    ...(cpu0 === undefined || cpu1 === undefined || r.transactions === 0 ? {} : { dbCpuMsPerLoop: round(((cpu1 - cpu0) * 1000) / r.transactions, 4) }),
    errors: r.abortedClients + r.failedTransactions + (r.exitCode !== 0 && r.abortedClients === 0 ? 1 : 0),
  };
}

/** Sums SHOW STATS columns over the read-only endpoint's processes. */
async function readOnlyStats(r: Rehearsal): Promise<{ readonly xacts: number; readonly waitUs: number }> {
  const rows = (await r.poolerConsole('readOnly', 'SHOW STATS')).flat();
  const sum = (column: string): number => rows.reduce((t, row) => t + Number(row[column] ?? 0), 0);
  return { xacts: sum('total_xact_count'), waitUs: sum('total_wait_time') };
}

interface PooledLoopFigures extends LoopFigures {
  /** How long a transaction waited for a server connection, on average (SHOW STATS total_wait_time / total_xact_count). */
  readonly waitMsPerTransaction: number;
}

/**
 * Query loops through the read-only endpoint with its per-transaction reset on (as configured) or off
 * (server_reset_query_always = 0 on every process through the admin console, put back afterwards): the
 * price of session isolation between clients, beside the path without it.
 */
async function pooledLoops(r: Rehearsal, n: number, reset: boolean, postmaster: number | undefined): Promise<PooledLoopFigures> {
  // Off: the configured value (the processes share one ini) is put back afterwards.
  const configured = reset ? undefined : ((await r.poolerConsole('readOnly', 'SHOW CONFIG')).flat().find((row) => row.key === 'server_reset_query_always')?.value ?? '1');
  if (configured !== undefined) await r.poolerConsole('readOnly', 'SET server_reset_query_always = 0');
  try {
    const before = await readOnlyStats(r);
    const figures = await loops(r.endpoints.readOnly, n, { postmaster });
    const after = await readOnlyStats(r);
    const xacts = after.xacts - before.xacts;
    return { ...figures, waitMsPerTransaction: round(xacts > 0 ? (after.waitUs - before.waitUs) / xacts / 1000 : Number.NaN, 4) };
  } finally {
    if (configured !== undefined) await r.poolerConsole('readOnly', `SET server_reset_query_always = ${configured}`);
  }
}

/**
 * What each statement of the reset costs on its own: a loop of that statement alone against a loop of
 * SELECT 1, each one statement per round trip on an open direct connection.
 */
async function resetStatementCosts(endpoint: Endpoint, n: number, dir: string): Promise<Array<{ readonly statement: string; readonly addedMs: number }>> {
  mkdirSync(dir, { recursive: true });
  const script = (name: string, sql: string): string => {
    const file = join(dir, `reset-${name}.sql`);
    writeFileSync(file, `${sql};\n`);
    return file;
  };
  const baseline = await loops(endpoint, n, { scripts: [script('baseline', 'SELECT 1')] });
  const out: Array<{ statement: string; addedMs: number }> = [];
  for (const [i, statement] of SERVER_RESET_STATEMENTS.entries()) {
    const f = await loops(endpoint, n, { scripts: [script(String(i), statement)] });
    out.push({ statement, addedMs: round(f.msPerLoop - baseline.msPerLoop, 4) });
  }
  return out;
}

interface ClientWorkFigures {
  readonly connections: number;
  /** open (TCP, TLS, SCRAM) + SELECT 1 + close, wall time per connection. */
  readonly wallMsPerConnection: number;
  /** This process's CPU (all threads) per connection: the client's own share of the work. */
  readonly clientCpuMsPerConnection: number;
  /** Of which SCRAM's key derivation (PBKDF2-HMAC-SHA-256 at SCRAM_ITERATIONS), done once per login. */
  readonly scramKeyDerivationMs: number;
  /** The rest of the client's CPU: the TLS handshake and the protocol. */
  readonly tlsAndProtocolMs: number;
  /** clientCpuMsPerConnection / wallMsPerConnection. */
  readonly clientShareOfConnection: number;
}

async function openQueryClose(config: ClientConfig): Promise<void> {
  const c = new Client(config);
  c.on('error', () => undefined);
  await c.connect();
  try {
    await c.query('SELECT 1');
  } finally {
    await c.end();
  }
}

/**
 * How much of a connection's time is the client's own work (node-postgres, as the Lambda consumers
 * connect): sequential open+query+close, this process's CPU against the wall clock. SCRAM's PBKDF2 is
 * timed on its own, so the rest is the TLS handshake and the protocol.
 */
async function clientWork(endpoint: Endpoint, n: number): Promise<ClientWorkFigures> {
  const config = clientConfig(endpoint, 10000);
  for (let i = 0; i < 10; i++) await openQueryClose(config);
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  for (let i = 0; i < n; i++) await openQueryClose(config);
  const wallMs = (performance.now() - wallBefore) / n;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuMs = (cpu.user + cpu.system) / 1000 / n;
  const salt = randomBytes(16);
  const scramBefore = process.cpuUsage();
  for (let i = 0; i < n; i++) pbkdf2Sync(endpoint.password, salt, SCRAM_ITERATIONS, 32, 'sha256');
  const scram = process.cpuUsage(scramBefore);
  const scramMs = (scram.user + scram.system) / 1000 / n;
  return {
    connections: n,
    wallMsPerConnection: round(wallMs, 3),
    clientCpuMsPerConnection: round(cpuMs, 3),
    scramKeyDerivationMs: round(scramMs, 3),
    tlsAndProtocolMs: round(Math.max(0, cpuMs - scramMs), 3),
    clientShareOfConnection: round(ratio(cpuMs, wallMs), 3),
  };
}

interface LambdaFigures {
  readonly invocations: number;
  readonly meanMs: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly coldStartMs: number;
  readonly errors: number;
}

async function lambdaRun(endpoint: Endpoint, mode: ConnectionMode, n: number): Promise<LambdaFigures> {
  const outcomes = await simulateInvocations({ handler: 'read', env: lambdaEnvironment(endpoint, EndpointRole.READ_ONLY, { connectionMode: mode }), containers: 1, invocationsPerContainer: n + 1, event: () => ({ id: 1 }) });
  const warm = outcomes.filter((o) => !o.cold);
  const ms = warm.filter((o) => o.error === undefined).map((o) => o.elapsedMs);
  return {
    invocations: warm.length,
    meanMs: round(mean(ms), 3),
    p50Ms: round(percentile(ms, 50), 3),
    p99Ms: round(percentile(ms, 99), 3),
    coldStartMs: round(outcomes.find((o) => o.cold)?.elapsedMs ?? Number.NaN, 1),
    errors: outcomes.filter((o) => o.error !== undefined).length,
  };
}

async function seedEvent(r: Rehearsal): Promise<void> {
  const c = new Client(clientConfig(r.endpoints.writer, 10000));
  c.on('error', () => undefined);
  await c.connect();
  try {
    await c.query(CREATE_TABLE_SQL);
    await c.query(`INSERT INTO kit_events (id, payload) VALUES (1, '{"bench": true}') ON CONFLICT DO NOTHING`);
  } finally {
    await c.end();
  }
}

export async function connectOverhead(ctx: ScenarioContext): Promise<ScenarioResult> {
  const started = Date.now();
  const n = ctx.quick ? 300 : 1000;
  const lambdaN = ctx.quick ? 50 : 200;
  const settings = { addressBlock: BENCH_BLOCKS.connectOverhead.block, replicas: 1, maxConnections: 100, comparisonProxies: false, pool: { maxConnectionsPercent: 100, maxIdleConnectionsPercent: 10, connectionBorrowTimeoutSeconds: 120 } };
  const figures = await withRehearsal(settings, ctx.outDir, async (r) => {
    await preparePgbenchData(r);
    await seedEvent(r);
    const direct = r.endpoints.replicas[0]!;
    const pooled = r.endpoints.readOnly;
    ctx.log(`  connect_overhead: ${n} query and ${n} connect+query loops, then ${lambdaN} read handler invocations per connection mode, each direct and through the read-only endpoint`);
    const replicaPm = r.pidOf(direct.name);
    const out = {
      directQuery: await loops(direct, n, { postmaster: replicaPm }),
      pooledQuery: await pooledLoops(r, n, true, replicaPm),
      pooledQueryIsolationOff: await pooledLoops(r, n, false, replicaPm),
      resetStatements: await resetStatementCosts(direct, Math.max(200, Math.floor(n / 2)), ctx.scratchDir),
      directOpenQuery: await loops(direct, n, { connect: true }),
      pooledOpenQuery: await loops(pooled, n, { connect: true }),
      clientWork: { direct: await clientWork(direct, ctx.quick ? 50 : 200), pooled: await clientWork(pooled, ctx.quick ? 50 : 200) },
      lambda: {
        directPerInvocation: await lambdaRun(direct, ConnectionMode.PER_INVOCATION, lambdaN),
        pooledPerInvocation: await lambdaRun(pooled, ConnectionMode.PER_INVOCATION, lambdaN),
        directReuse: await lambdaRun(direct, ConnectionMode.REUSE, lambdaN),
        pooledReuse: await lambdaRun(pooled, ConnectionMode.REUSE, lambdaN),
      },
    };
    return out;
  });
  const addedMs = round(figures.pooledQuery.msPerLoop - figures.directQuery.msPerLoop, 4);
  const addedIsolationOffMs = round(figures.pooledQueryIsolationOff.msPerLoop - figures.directQuery.msPerLoop, 4);
  const ratios = {
    queryOnOpenConnection: round(ratio(figures.pooledQuery.msPerLoop, figures.directQuery.msPerLoop), 4),
    queryOnOpenConnectionResetOff: round(ratio(figures.pooledQueryIsolationOff.msPerLoop, figures.directQuery.msPerLoop), 4),
    openPlusQuery: round(ratio(figures.pooledOpenQuery.msPerLoop, figures.directOpenQuery.msPerLoop), 4),
    clientCpuPerConnection: round(ratio(figures.clientWork.pooled.clientCpuMsPerConnection, figures.clientWork.direct.clientCpuMsPerConnection), 4),
    lambdaPerInvocation: round(ratio(figures.lambda.pooledPerInvocation.meanMs, figures.lambda.directPerInvocation.meanMs), 4),
    lambdaReuseVsPerInvocationPooled: round(ratio(figures.lambda.pooledReuse.meanMs, figures.lambda.pooledPerInvocation.meanMs), 4),
  };
  const labels = { baselineLabel: 'direct (replica, TLS)', oursLabel: 'PgBouncer read-only (TLS)' };
  const checks = [
    fewerBy({ id: 'co-open-query', metric: 'open+query per loop', seed: SEED_FIGURES.coOpen.text, ...labels, baseline: figures.directOpenQuery.msPerLoop, ours: figures.pooledOpenQuery.msPerLoop, unit: 'ms', factor: 1.5, word: 'faster' }),
  ];
  const cpu = (f: LoopFigures): number | null => f.dbCpuMsPerLoop ?? null;
  // The time added per query has no target: measured against 0.1 ms it was retired (docs/BENCH.md, "Retired targets").
  const comparison: Comparison = {
    columns: ['direct (replica, TLS)', 'PgBouncer, reset after every transaction (the default)', 'PgBouncer, reset off (server_reset_query_always = 0)'],
    seedColumn: 'RDS Proxy (seed)',
    rows: [
      { metric: 'query on an open connection, 1 client', unit: 'ms', values: [figures.directQuery.msPerLoop, figures.pooledQuery.msPerLoop, figures.pooledQueryIsolationOff.msPerLoop], seed: '0.50 ms direct, 1.24 ms through RDS Proxy' },
      { metric: 'time the pooler adds per query', unit: 'ms', values: [null, addedMs, addedIsolationOffMs], seed: SEED_FIGURES.coQuery.text },
      { metric: "the instance's PostgreSQL CPU per query", unit: 'ms', values: [cpu(figures.directQuery), cpu(figures.pooledQuery), cpu(figures.pooledQueryIsolationOff)], seed: 'not published' },
      { metric: 'wait for a server connection per transaction', unit: 'ms', values: [null, figures.pooledQuery.waitMsPerTransaction, figures.pooledQueryIsolationOff.waitMsPerTransaction], seed: 'not published' },
      ...figures.resetStatements.map((r) => ({ metric: `reset statement alone, added to a SELECT 1 round trip: ${r.statement.length > 60 ? `${r.statement.slice(0, 57)}...` : r.statement}`, unit: 'ms', values: [r.addedMs, null, null], seed: 'none: the kit\'s reset' })),
    ],
  };
  return {
    name: 'connect_overhead',
    title: 'Connect overhead, direct vs pooled (seed 001)',
    seedSource: SEED_SOURCES.connect_overhead,
    startedAt: new Date(started).toISOString(),
    durationSeconds: round((Date.now() - started) / 1000, 1),
    environment: { ...ctx.environment, settings, load: { loops: n, lambdaInvocations: lambdaN, client: 'pgbench -c 1 -j 1 -t N --select-only [-C], TLS verify-full, SCRAM' }, scaling: ctx.environment.scaling.connect_overhead },
    figures: { ...figures, pooledAddsPerQueryMs: addedMs, pooledAddsPerQueryIsolationOffMs: addedIsolationOffMs, seedLambda: SEED_FIGURES.coLambda.text },
    ratios,
    checks,
    comparison,
    notes: [
      'msPerLoop = 1000 / pgbench tps (with -C pgbench includes the reconnection time in tps); each run follows a 100-loop warm-up.',
      `The client's own work per connection (node-postgres open+SELECT 1+close, its process CPU): through PgBouncer ${figures.clientWork.pooled.clientCpuMsPerConnection} ms of ${figures.clientWork.pooled.wallMsPerConnection} ms (${round(figures.clientWork.pooled.clientShareOfConnection * 100, 1)}%), of which SCRAM's PBKDF2 ${figures.clientWork.pooled.scramKeyDerivationMs} ms and TLS + protocol ${figures.clientWork.pooled.tlsAndProtocolMs} ms; direct ${figures.clientWork.direct.clientCpuMsPerConnection} ms of ${figures.clientWork.direct.wallMsPerConnection} ms.`,
      'Lambda: the read handler bundled from lambda/src under the Lambda runtime interface emulator on Node.js 24, one warm container; mean/p50/p99 of the warm invocations.',
    ],
  };
}
