/**
 * The read-only endpoint on its own (loopback block readOnlyRoleSuite), with the health checker looking
 * only once a minute so nothing is re-pointed behind the test's back: its server logins use a role that
 * can read but not write, so a write fails even where a pool ends up on a server that is not in
 * recovery, and the fleet's read-only guard drops such a server connection after the transaction; and a
 * killed PgBouncer process's new connections go to the endpoint's other processes.
 */
import { Client } from 'pg';
import { clientConfig, query, type Rehearsal, waitFor } from '../../../lib/rehearsal';
import { startRehearsal, stopRehearsal } from './live';
import { connected, FreshConnectionProber } from './pooler-clients';

let started: Awaited<ReturnType<typeof startRehearsal>> | undefined;
let rehearsal: Rehearsal;

beforeAll(async () => {
  started = await startRehearsal('readOnlyRoleSuite', { healthCheckIntervalMs: 60000 });
  rehearsal = started.rehearsal;
}, 90000);

afterAll(async () => {
  await stopRehearsal(started);
}, 60000);

async function sqlState(client: Client, sql: string): Promise<string> {
  return client.query(sql).then(() => 'ok', (err: { code?: string }) => err.code ?? 'no code');
}

test('GIVEN the supervisor paused, so nothing restarts it WHEN a read-only PgBouncer process is killed THEN every new connection still succeeds on the others (the kernel stops handing connections to a dead listener)', async () => {
  // GIVEN
  const victim = rehearsal.pidOf('pgbouncer-ro-1')!;
  const supervisor = rehearsal.pidOf('health-supervisor')!;
  const prober = new FreshConnectionProber(rehearsal.endpoints.readOnly, 10);

  // WHEN
  process.kill(supervisor, 'SIGSTOP');
  const killedAt = Date.now();
  let probes: Awaited<ReturnType<FreshConnectionProber['stop']>>;
  try {
    process.kill(victim, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 2000));
    probes = await prober.stop();
    expect(rehearsal.pidOf('pgbouncer-ro-1')).toBeUndefined();
  } finally {
    process.kill(supervisor, 'SIGCONT');
  }

  // THEN: only the one attempt in flight while the process died (its socket closes as it exits, within
  // a few ms of the signal) may have been on the killed process
  const startedAfter = probes.failureStarts.filter((t) => t >= killedAt + 100);
  process.stdout.write(`read-only process killed, no restart: ${probes.failures} of ${probes.attempts} fresh connections failed over 2 s (${startedAfter.length} begun 100 ms or more after the kill)\n`);
  expect(probes.attempts).toBeGreaterThan(20);
  expect(startedAfter).toEqual([]);
  expect(probes.failures).toBeLessThanOrEqual(1);
});

test('GIVEN a replica promoted behind the health checker\'s back WHEN a read-only client served by that writer writes THEN PostgreSQL refuses for lack of privilege, while reads work, and the connection is not lent again', async () => {
  // GIVEN a table written through the read/write endpoint, present on replica1, which then becomes a writer
  await query(rehearsal.endpoints.readWrite, 'CREATE TABLE role_marker (id int PRIMARY KEY)');
  await query(rehearsal.endpoints.readWrite, 'INSERT INTO role_marker VALUES (1)');
  const replica1 = rehearsal.adminEndpoint('replica1');
  await waitFor('role_marker on replica1', 10000, async () => ((await query({ ...replica1, database: 'kit' }, "SELECT to_regclass('role_marker') IS NOT NULL AS here"))[0]?.here ? true : undefined));
  await query(replica1, 'SELECT pg_promote(true, 30)', undefined, 35000);
  // In a transaction: the read-only guard (READ_ONLY_ROLE_GUARD) ends a server connection to a writer after
  // every transaction, so only a connection the guard passed as a replica's carries one more, this one.
  const onWriter = await waitFor('a read-only client served by the promoted replica', 20000, async () => {
    const client = new Client(clientConfig(rehearsal.endpoints.readOnly, 5000));
    client.on('error', () => undefined);
    await client.connect();
    try {
      await client.query('BEGIN');
      const row = (await client.query<{ in_recovery: boolean; address: string; login: string }>('SELECT pg_is_in_recovery() AS in_recovery, host(inet_server_addr()) AS address, current_user AS login')).rows[0];
      if (row?.in_recovery === false) return { client, row };
    } catch {
      // A server connection the guard ended: try again.
    }
    await client.end();
    return undefined;
  }, 10);

  try {
    // WHEN / THEN: 42501 insufficient_privilege, not 25006: the server is not read-only, the login is
    expect(onWriter.row).toEqual({ in_recovery: false, address: rehearsal.endpoints.replicas.find((r) => r.name === 'replica1')!.host, login: 'rehearsal_readonly' });
    const attempt = async (sql: string): Promise<string> => {
      await onWriter.client.query('SAVEPOINT attempt');
      const state = await sqlState(onWriter.client, sql);
      await onWriter.client.query('ROLLBACK TO SAVEPOINT attempt');
      return state;
    };
    expect(await attempt('CREATE TABLE written_through_read_only (id int)')).toBe('42501');
    expect(await attempt('INSERT INTO role_marker VALUES (2)')).toBe('42501');
    expect(await attempt('UPDATE role_marker SET id = 3')).toBe('42501');
    expect((await onWriter.client.query<{ n: number }>('SELECT count(*)::int AS n FROM role_marker')).rows[0]?.n).toBe(1);
    await onWriter.client.query('COMMIT');
    // The guard ran with the reset: the client's next transaction is not served by the writer.
    const next = await Promise.race([
      onWriter.client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r').then((res) => String(res.rows[0]?.r), (err: { code?: string }) => err.code ?? 'error'),
      new Promise<string>((resolve) => setTimeout(() => resolve('still waiting'), 5000)),
    ]);
    expect(next).not.toBe('false');
  } finally {
    await onWriter.client.end();
  }
  // Clients still log in as themselves: the endpoint checks kit_app's own password.
  const wrong = connected({ ...rehearsal.endpoints.readOnly, password: 'not-the-password' });
  await expect(wrong).rejects.toThrow(/password authentication failed|SASL authentication failed/);
});
