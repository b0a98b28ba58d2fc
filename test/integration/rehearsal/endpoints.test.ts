/**
 * A live rehearsal (PostgreSQL 15 writer + 2 streaming replicas, PgBouncer endpoints, HAProxy,
 * pgpool-II, the health checker): what the endpoints promise, the real Lambda handlers through them,
 * and a replica crash. Loopback block endpointsSuite (other suites use other blocks).
 */
import { Client } from 'pg';
import { simulateInvocations, lambdaEnvironment, type Endpoint, type Rehearsal, clientConfig, query } from '../../../lib/rehearsal';
import { startRehearsal, stopRehearsal } from './live';
import { EndpointRole } from '../../../lambda/src/environment';

let started: Awaited<ReturnType<typeof startRehearsal>> | undefined;
let rehearsal: Rehearsal;

beforeAll(async () => {
  started = await startRehearsal('endpointsSuite');
  rehearsal = started.rehearsal;
}, 90000);

afterAll(async () => {
  await stopRehearsal(started);
}, 60000);

interface Served {
  address: string;
  in_recovery: boolean;
}

const SERVED_SQL = 'SELECT host(inet_server_addr()) AS address, pg_is_in_recovery() AS in_recovery';

/** `clients` concurrent connections, each running `sql` `times` times; returns every row. */
async function concurrently<R extends object>(endpoint: Endpoint, clients: number, times: number, sql: string): Promise<R[]> {
  const rows = await Promise.all(
    Array.from({ length: clients }, async () => {
      // Generous: 500 TLS handshakes on 2 cores, while another suite runs too.
      const client = new Client(clientConfig(endpoint, 60000));
      client.on('error', () => undefined);
      await client.connect();
      try {
        const out: R[] = [];
        for (let i = 0; i < times; i++) out.push(...(await client.query<R & object>(sql)).rows);
        return out;
      } finally {
        await client.end();
      }
    }),
  );
  return rows.flat();
}

describe('the read-only endpoint', () => {
  test('GIVEN the read-only endpoint WHEN a client writes THEN the replica rejects it as read-only', async () => {
    // WHEN
    const write = query(rehearsal.endpoints.readOnly, 'CREATE TABLE should_not_exist (id int)');

    // THEN
    await expect(write).rejects.toMatchObject({ code: '25006' });
  });

  test('GIVEN concurrent readers WHEN they query THEN reads reach every replica and only replicas', async () => {
    // WHEN
    const rows = await concurrently<Served>(rehearsal.endpoints.readOnly, 20, 3, `${SERVED_SQL}, pg_sleep(0.05)`);

    // THEN
    expect(rows.every((r) => r.in_recovery)).toBe(true);
    expect(new Set(rows.map((r) => r.address))).toEqual(new Set(rehearsal.endpoints.replicas.map((r) => r.host)));
  });

  /** Peak server connections of the read-only endpoint's login on each replica while `work` runs. */
  async function peakServerConnections(work: () => Promise<unknown>): Promise<{ perReplica: Record<string, number>; together: number }> {
    const perReplica: Record<string, number> = {};
    let together = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const counts = await Promise.all(
          rehearsal.endpoints.replicas.map(async (r) => {
            const rows = await query<{ n: number }>(rehearsal.adminEndpoint(r.name), "SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = 'rehearsal_readonly' AND backend_type = 'client backend'", undefined, 10000);
            return [r.name, rows[0]?.n ?? 0] as const;
          }),
        ).catch(() => undefined); // a slow sample under load is skipped, not fatal
        if (counts !== undefined) {
          for (const [name, n] of counts) perReplica[name] = Math.max(perReplica[name] ?? 0, n);
          together = Math.max(together, counts.reduce((sum, [, n]) => sum + n, 0));
        }
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    try {
      await work();
    } finally {
      sampling = false;
      await sampler;
    }
    return { perReplica, together };
  }

  test('GIVEN 500 concurrent clients WHEN they all query THEN no replica gets more server connections than its pool budget', async () => {
    // GIVEN poolSizing(40, 50%) = 20 server connections on each replica (the endpoint logs in as its read-only role)
    const poolSize = rehearsal.poolSizes.readOnly;
    expect(poolSize).toBe(20);

    // WHEN
    let rows: Served[] = [];
    const peak = await peakServerConnections(async () => {
      rows = await concurrently<Served>(rehearsal.endpoints.readOnly, 500, 2, `${SERVED_SQL}, pg_sleep(0.01)`);
    });

    // THEN
    expect(rows).toHaveLength(1000);
    expect(peak.together).toBeGreaterThan(0);
    for (const n of Object.values(peak.perReplica)) expect(n).toBeLessThanOrEqual(poolSize);
  });

  test('GIVEN more slow readers than one replica\'s budget WHEN they read together THEN every replica fills its own pool: more than one budget in all, none above its own', async () => {
    // WHEN 60 clients, 4 reads of 300 ms each: more than the 2 x 20 server connections can serve at once
    const poolSize = rehearsal.poolSizes.readOnly;
    const peak = await peakServerConnections(() => concurrently<Served>(rehearsal.endpoints.readOnly, 60, 4, `${SERVED_SQL}, pg_sleep(0.3)`));

    // THEN
    process.stdout.write(`read-only endpoint, 60 slow readers: peak server connections ${JSON.stringify(peak.perReplica)}, together ${peak.together} (budget ${poolSize} per replica)\n`);
    expect(Object.keys(peak.perReplica).sort()).toEqual(['replica1', 'replica2']);
    for (const n of Object.values(peak.perReplica)) expect(n).toBeLessThanOrEqual(poolSize);
    expect(peak.together).toBeGreaterThan(poolSize);
  });
});

describe('the comparison proxies', () => {
  test('GIVEN HAProxy and pgpool-II WHEN reading through them THEN both answer over TLS, HAProxy from a replica', async () => {
    const viaHaproxy = await query<Served>(rehearsal.endpoints.haproxy!, SERVED_SQL);
    const viaPgpool = await query<{ one: number }>(rehearsal.endpoints.pgpool!, 'SELECT 1 AS one');
    expect(viaHaproxy[0]?.in_recovery).toBe(true);
    expect(viaPgpool).toEqual([{ one: 1 }]);
  });
});

describe('the Lambda consumers through the endpoints', () => {
  test('GIVEN 4 concurrent containers WHEN each writes 3 events THEN cold starts connect, warm ones reuse, all land on the writer', async () => {
    // WHEN
    const outcomes = await simulateInvocations({
      handler: 'write',
      env: lambdaEnvironment(rehearsal.endpoints.readWrite, EndpointRole.READ_WRITE),
      containers: 4,
      invocationsPerContainer: 3,
      event: (c, i) => ({ id: 1000 + c * 10 + i, payload: { container: c } }),
    });

    // THEN
    expect(outcomes.filter((o) => o.error)).toEqual([]);
    for (const o of outcomes) {
      expect(o.response).toMatchObject({ inserted: true, served_by: { address: rehearsal.endpoints.writer.host, in_recovery: false }, connection: { reused: !o.cold } });
    }
  });

  test('GIVEN 4 concurrent containers WHEN each reads 3 times THEN every read is served by a replica and warm invocations reuse the connection', async () => {
    // GIVEN the events written above have replicated (synchronous replication acknowledges on flush)
    await new Promise((r) => setTimeout(r, 200));

    // WHEN
    const outcomes = await simulateInvocations({
      handler: 'read',
      env: lambdaEnvironment(rehearsal.endpoints.readOnly, EndpointRole.READ_ONLY),
      containers: 4,
      invocationsPerContainer: 3,
      event: (c) => ({ id: 1000 + c * 10 }),
    });

    // THEN
    expect(outcomes.filter((o) => o.error)).toEqual([]);
    const replicas = rehearsal.endpoints.replicas.map((r) => r.host);
    for (const o of outcomes) {
      expect(o.response).toMatchObject({ served_by: { in_recovery: true }, connection: { reused: !o.cold } });
      expect(replicas).toContain((o.response!.served_by as Served).address);
    }
    expect(outcomes.filter((o) => o.cold)).toHaveLength(4);
  });

  test('GIVEN a reader container WHEN it is wired to the read/write role THEN the handler refuses with ConfigError', async () => {
    const [outcome] = await simulateInvocations({
      handler: 'read',
      env: lambdaEnvironment(rehearsal.endpoints.readOnly, EndpointRole.READ_WRITE),
      containers: 1,
      invocationsPerContainer: 1,
      event: () => ({}),
    });
    expect(outcome?.error).toMatchObject({ name: 'ConfigError' });
  });
});

describe('a replica crash', () => {
  test('GIVEN a replica is killed WHEN the health checker drops it THEN the read-only endpoint keeps answering from the other one', async () => {
    // WHEN
    const killed = await rehearsal.killReplica(0);

    // THEN
    const survivor = rehearsal.endpoints.replicas.find((r) => r.host !== killed.address)!;
    const rows = await concurrently<Served>(rehearsal.endpoints.readOnly, 10, 3, SERVED_SQL);
    expect(rows).toHaveLength(30);
    expect(new Set(rows.map((r) => r.address))).toEqual(new Set([survivor.host]));
    expect(rehearsal.health()?.readOnlyHosts).toEqual([survivor.host]);
    expect(killed.droppedAfterMs).toBeLessThan(5000);
    process.stdout.write(`replica ${killed.name} dropped from the read-only pool ${killed.droppedAfterMs} ms after the kill\n`);
  });
});
