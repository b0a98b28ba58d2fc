/**
 * transaction_pooling: what PgBouncer 1.25.2 does in transaction pooling that RDS Proxy does not, the
 * reasons to choose the PgBouncer engine. RDS Proxy pins a client to one server connection for the
 * rest of its session once it prepares a statement (Aurora User Guide, rds-proxy-pinning), so every
 * client using named statements holds a database connection, as if it had connected directly.
 *
 * - prepared: C node-postgres clients each run Q queries as named prepared statements (`{ name }`,
 *   the extended protocol's Parse/Bind), each query its own transaction: directly to the replica
 *   (each client holds a backend: what pinning amounts to) and through the read-only endpoint
 *   (max_prepared_statements). Server connections used, errors, and the throughput once every client is
 *   connected (queries per second), so "no pinning" carries its cost or gain.
 * - cancel: K times a client starts pg_sleep through the endpoint, and a new connection sends the
 *   CancelRequest with the key PgBouncer gave that client (over TLS, as drivers send it). The kernel
 *   hands it to any of the endpoint's so_reuseport processes; [peers] forwards it to the owner. Time
 *   from the request to the query's 57014, and whether the same client's next query succeeds.
 */
import { performance } from 'node:perf_hooks';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { clientConfig, type Endpoint, type Rehearsal } from '../../rehearsal';
import { BENCH_BLOCKS } from '../blocks';
import { atLeastShare, atMost } from '../checks';
import { ConnectionSampler, windowStats } from '../sampler';
import { withRehearsal } from '../scope';
import { SEED_FIGURES, SEED_SOURCES } from '../seed-figures';
import { mean, percentile, ratio, round } from '../stats';
import type { ScenarioResult } from '../types';
import type { ScenarioContext } from './context';

interface PreparedFigures {
  readonly clients: number;
  readonly queriesPerClient: number;
  readonly errors: number;
  readonly firstError?: string;
  readonly serverConnectionsPeak: number;
  readonly serverConnectionsAvg: number;
  /** From the moment every client was connected until the last query returned. */
  readonly queryWallSeconds: number;
  /** clients x queries / queryWallSeconds. */
  readonly queriesPerSecond: number;
}

/** `serverRoles`: the roles the side's server connections log in as (the pooler's idle pool is not the direct side's). */
async function preparedLoad(r: Rehearsal, endpoint: Endpoint, serverRoles: ReadonlyArray<string>, clients: number, queries: number): Promise<PreparedFigures> {
  const sampler = new ConnectionSampler(serverRoles, 100);
  const replica = r.endpoints.replicas[0]!;
  await sampler.add(replica.name, r.adminEndpoint(replica.name));
  sampler.start();
  const errors: string[] = [];
  // Every client connects first, so the timed part is the queries alone (the logins cost differs per side).
  let connected = 0;
  let allConnected: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (allConnected = resolve));
  let queriesFrom = 0;
  const arrived = (): void => {
    if (++connected === clients) {
      queriesFrom = performance.now();
      allConnected();
    }
  };
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      const client = new Client(clientConfig(endpoint, 20000));
      client.on('error', () => undefined);
      try {
        try {
          await client.connect();
        } finally {
          arrived();
        }
        await ready;
        for (let i = 0; i < queries; i++) {
          const res = await client.query<{ v: number }>({ name: 'apk_bench_lookup', text: 'SELECT $1::int + $2::int AS v', values: [c, i] });
          if (res.rows[0]?.v !== c + i) errors.push(`client ${c} query ${i}: ${JSON.stringify(res.rows)}`);
        }
      } catch (err) {
        errors.push(`client ${c}: ${(err as Error).message}`);
      } finally {
        await client.end().catch(() => undefined);
      }
    }),
  );
  const queryWallSeconds = (performance.now() - queriesFrom) / 1000;
  const stats = windowStats(await sampler.stop());
  return {
    clients,
    queriesPerClient: queries,
    errors: errors.length,
    ...(errors[0] === undefined ? {} : { firstError: errors[0] }),
    serverConnectionsPeak: stats.perInstancePeak,
    serverConnectionsAvg: round(stats.perInstanceAvg, 2),
    queryWallSeconds: round(queryWallSeconds, 3),
    queriesPerSecond: round((clients * queries) / queryWallSeconds, 1),
  };
}

/** SSLRequest, TLS, then CancelRequest (code 80877102) with the backend key; resolves when the server closes. */
function sendCancel(endpoint: Endpoint, processId: number, secretKey: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(endpoint.port, endpoint.host);
    socket.setTimeout(5000, () => socket.destroy(new Error('cancel request timed out')));
    socket.once('error', reject);
    socket.once('connect', () => socket.write(Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f])));
    socket.once('data', (answer) => {
      if (answer[0] !== 0x53) return reject(new Error(`the endpoint refused TLS for the cancel request (${answer.toString('latin1', 0, 1)})`));
      const tls = tlsConnect({ socket, ca: readFileSync(endpoint.caFile), servername: endpoint.host, rejectUnauthorized: false });
      tls.once('error', reject);
      tls.once('secureConnect', () => {
        const packet = Buffer.alloc(16);
        packet.writeInt32BE(16, 0);
        packet.writeInt32BE(80877102, 4);
        packet.writeInt32BE(processId, 8);
        packet.writeInt32BE(secretKey, 12);
        tls.end(packet);
      });
      tls.once('close', () => resolve());
      tls.resume();
    });
  });
}

interface CancelFigures {
  readonly attempts: number;
  readonly cancelled: number;
  /** The same client's next query succeeded after its cancel. */
  readonly clientUsableAfter: number;
  readonly msToCancelMean: number;
  readonly msToCancelP99: number;
  readonly failures: ReadonlyArray<string>;
}

async function cancels(endpoint: Endpoint, attempts: number): Promise<CancelFigures> {
  const times: number[] = [];
  const failures: string[] = [];
  let usable = 0;
  for (let k = 0; k < attempts; k++) {
    const client = new Client(clientConfig(endpoint, 20000));
    client.on('error', () => undefined);
    await client.connect();
    try {
      const key = client as unknown as { processID: number; secretKey: number };
      const sleeping = client.query('SELECT pg_sleep(20)').then(
        () => 'finished',
        (err: { code?: string; message: string }) => err.code ?? err.message,
      );
      await new Promise((r) => setTimeout(r, 300));
      const sent = performance.now();
      await sendCancel(endpoint, key.processID, key.secretKey);
      const outcome = await sleeping;
      if (outcome === '57014') times.push(performance.now() - sent);
      else failures.push(`attempt ${k}: ${outcome}`);
      if ((await client.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one === 1) usable++;
    } catch (err) {
      failures.push(`attempt ${k}: ${(err as Error).message}`);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  return { attempts, cancelled: times.length, clientUsableAfter: usable, msToCancelMean: round(mean(times), 2), msToCancelP99: round(percentile(times, 99), 2), failures };
}

export async function transactionPooling(ctx: ScenarioContext): Promise<ScenarioResult> {
  const started = Date.now();
  const clients = ctx.quick ? 20 : 60;
  const queries = ctx.quick ? 50 : 200;
  const attempts = ctx.quick ? 4 : 12;
  // A pool of 10 server connections per replica (maxConnectionsPercent 10 of 100), split over 2 processes.
  const settings = { addressBlock: BENCH_BLOCKS.transactionPooling.block, replicas: 1, maxConnections: 100, comparisonProxies: false, pool: { maxConnectionsPercent: 10, maxIdleConnectionsPercent: 5, connectionBorrowTimeoutSeconds: 120 } };
  const figures = await withRehearsal(settings, ctx.outDir, async (r) => {
    const direct = r.endpoints.replicas[0]!;
    // The read-only endpoint logs in to the servers as its own role, not as the client.
    const pooledRoles = r.applicationRoles.filter((role) => role !== direct.user);
    return {
      poolSize: r.poolSizes.readOnly,
      preparedDirect: await preparedLoad(r, direct, [direct.user], clients, queries),
      preparedPooled: await preparedLoad(r, r.endpoints.readOnly, pooledRoles, clients, queries),
      cancelDirect: await cancels(direct, attempts),
      cancelPooled: await cancels(r.endpoints.readOnly, attempts),
    };
  });
  const { preparedDirect: pd, preparedPooled: pp, cancelDirect: cd, cancelPooled: cp } = figures;
  const checks = [
    atMost({ id: 'tp-prepared-errors', metric: 'errors, named prepared statements in transaction pooling', seed: SEED_FIGURES.tpPinning.text, baselineLabel: 'direct (replica)', oursLabel: 'PgBouncer read-only', baseline: pd.errors, ours: pp.errors, unit: 'errors', limit: 0 }),
    // No pinning: however many clients prepare statements, the pooler stays within its pool.
    atMost({ id: 'tp-prepared-server-connections', metric: `server connections used by ${clients} clients with named prepared statements (peak; pool ${figures.poolSize})`, seed: SEED_FIGURES.tpPinning.text, baselineLabel: 'direct = pinned (a backend per client)', oursLabel: 'PgBouncer read-only', baseline: pd.serverConnectionsPeak, ours: pp.serverConnectionsPeak, unit: 'connections', limit: figures.poolSize }),
    atLeastShare({ id: 'tp-cancelled', metric: 'cancel requests that cancelled the query through the pooler', seed: SEED_FIGURES.tpCancel.text, baselineLabel: 'direct (replica)', oursLabel: 'PgBouncer read-only (2 processes, peers)', baseline: ratio(cd.cancelled, cd.attempts), ours: ratio(cp.cancelled, cp.attempts), unit: 'share', min: 1 }),
  ];
  return {
    name: 'transaction_pooling',
    title: 'Transaction pooling: prepared statements and cancellation (PgBouncer engine)',
    seedSource: SEED_SOURCES.transaction_pooling,
    startedAt: new Date(started).toISOString(),
    durationSeconds: round((Date.now() - started) / 1000, 1),
    environment: { ...ctx.environment, settings, load: { clients, queriesPerClient: queries, cancelAttempts: attempts, client: 'node-postgres, TLS verify-full, SCRAM' }, scaling: ctx.environment.scaling.transaction_pooling },
    figures,
    ratios: {
      preparedServerConnectionsPeak: round(ratio(pp.serverConnectionsPeak, pd.serverConnectionsPeak), 4),
      preparedThroughput: round(ratio(pp.queriesPerSecond, pd.queriesPerSecond), 4),
      cancelShare: round(ratio(ratio(cp.cancelled, cp.attempts), ratio(cd.cancelled, cd.attempts)), 4),
      msToCancel: round(ratio(cp.msToCancelMean, cd.msToCancelMean), 4),
    },
    checks,
    notes: [
      'Server connections: client backends on the replica (pg_stat_activity, every 100 ms), the application roles and the read-only endpoint\'s server role.',
      `Named prepared statements, ${clients} clients once all were connected: ${pp.queriesPerSecond} queries/s through the pooler (${pp.serverConnectionsPeak} server connections at most) against ${pd.queriesPerSecond} directly (${pd.serverConnectionsPeak}), ${round(ratio(pp.queriesPerSecond, pd.queriesPerSecond), 2)}x; RDS Proxy would pin each of these clients to a server connection of its own (rds-proxy-pinning), as the direct side holds a backend per client.`,
      `Cancel: ${cp.cancelled}/${cp.attempts} through the pooler in ${cp.msToCancelMean} ms (p99 ${cp.msToCancelP99} ms), the client usable after ${cp.clientUsableAfter} times; direct ${cd.cancelled}/${cd.attempts} in ${cd.msToCancelMean} ms.`,
    ],
  };
}
