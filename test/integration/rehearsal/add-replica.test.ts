/**
 * Adding a replica to a running rehearsal (loopback block addReplicaSuite), as adding an Aurora reader: it
 * streams, the read-only endpoint and HAProxy start sending connections to it, nothing is restarted.
 */
import { type Rehearsal, query } from '../../../lib/rehearsal';
import { SUITE_BLOCKS } from '../../support/loopback-blocks';
import { startRehearsal, stopRehearsal } from './live';

let started: Awaited<ReturnType<typeof startRehearsal>> | undefined;
let rehearsal: Rehearsal;
/** The next address of the block after the writer (.2) and two replicas (.3, .4). */
const THIRD_REPLICA = `${SUITE_BLOCKS.addReplicaSuite.block}.5`;

beforeAll(async () => {
  started = await startRehearsal('addReplicaSuite');
  rehearsal = started.rehearsal;
}, 90000);

afterAll(async () => {
  // The added replica is tracked like the others: down() stops it by pid.
  if (started !== undefined) started.pids = (await started.rehearsal.status()).processes.map((p) => p.pid);
  await stopRehearsal(started);
}, 60000);

const SERVED_SQL = 'SELECT host(inet_server_addr()) AS address, pg_is_in_recovery() AS in_recovery';

test('GIVEN a running rehearsal with 2 replicas WHEN a replica is added THEN it streams and both the read-only endpoint and HAProxy route to it', async () => {
  // GIVEN
  const before = rehearsal.endpoints.replicas.map((r) => r.host);
  expect(before).toHaveLength(2);

  // WHEN
  const report = await rehearsal.addReplica();

  // THEN it is the next address of the block, streaming, with quorum commit covering it
  expect(report).toMatchObject({ name: 'replica3', address: THIRD_REPLICA, inHaproxy: true });
  expect(rehearsal.endpoints.replicas.map((r) => r.host)).toEqual([...before, THIRD_REPLICA]);
  const status = await rehearsal.status();
  expect(status.replication.map((r) => [r.application_name, r.state])).toEqual([['replica1', 'streaming'], ['replica2', 'streaming'], ['replica3', 'streaming']]);
  expect(status.nodes.find((n) => n.name === 'replica3')?.role).toBe('replica');
  expect(rehearsal.health()?.readOnlyHosts).toContain(THIRD_REPLICA);
  // verify-full against its address works (the certificate covers the spare addresses)
  expect(await query(rehearsal.endpoints.replicas[2]!, SERVED_SQL)).toEqual([{ address: THIRD_REPLICA, in_recovery: true }]);

  // Sequential new connections: HAProxy round-robins them over all three once its check passes.
  const viaHaproxy = new Set<string>();
  const deadline = Date.now() + 15000;
  while (!viaHaproxy.has(THIRD_REPLICA) && Date.now() < deadline) {
    const [row] = await query<{ address: string }>(rehearsal.endpoints.haproxy!, SERVED_SQL);
    viaHaproxy.add(row!.address);
  }
  expect(viaHaproxy.has(THIRD_REPLICA)).toBe(true);

  // The read-only pool's new server connections round-robin over the new host list.
  const viaPool = new Set<string>();
  const poolDeadline = Date.now() + 15000;
  while (!viaPool.has(THIRD_REPLICA) && Date.now() < poolDeadline) {
    const rows = await Promise.all(Array.from({ length: 6 }, () => query<{ address: string }>(rehearsal.endpoints.readOnly, `${SERVED_SQL}, pg_sleep(0.05)`)));
    for (const r of rows) viaPool.add(r[0]!.address);
  }
  expect(viaPool.has(THIRD_REPLICA)).toBe(true);
}, 90000);
