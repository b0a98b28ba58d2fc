/**
 * Writer failover drill on a live rehearsal (loopback block failoverSuite): sequential writes through the
 * read/write endpoint while the writer is killed and a replica promoted. With synchronous (quorum)
 * replication, every acknowledged write must survive; the downtime is measured and reported.
 */
import { runFailoverDrill, type DrillReport, lambdaEnvironment, simulateInvocations, type Rehearsal, query } from '../../../lib/rehearsal';
import { startRehearsal, stopRehearsal } from './live';
import { EndpointRole } from '../../../lambda/src/environment';

let started: Awaited<ReturnType<typeof startRehearsal>> | undefined;
let rehearsal: Rehearsal;
let report: DrillReport;

beforeAll(async () => {
  started = await startRehearsal('failoverSuite');
  rehearsal = started.rehearsal;
}, 90000);

afterAll(async () => {
  await stopRehearsal(started);
}, 60000);

test('GIVEN a sequential write workload WHEN the writer is killed and a replica promoted THEN the endpoint is re-pointed and every acknowledged id survives', async () => {
  // GIVEN / WHEN
  const oldWriter = rehearsal.endpoints.writer.host;
  report = await runFailoverDrill(rehearsal, { warmupWrites: 100, writesAfter: 100 });

  // THEN
  process.stdout.write(
    `failover drill: ${report.failover.oldWriter} -> ${report.failover.newWriter}, promoted after ${report.failover.promotedAfterMs} ms, ` +
      `read/write endpoint re-pointed after ${report.failover.repointedAfterMs} ms, client-visible downtime ${report.downtimeMs} ms, ` +
      `${report.acknowledged} writes acknowledged, ${report.failedAttempts} failed attempts retried, ${report.missing.length} missing\n`,
  );
  expect(report.missing).toEqual([]);
  expect(report.acknowledged).toBeGreaterThanOrEqual(200);
  expect(rehearsal.endpoints.writer.host).not.toBe(oldWriter);
  expect(rehearsal.health()?.readWriteHosts).toEqual([rehearsal.endpoints.writer.host]);
  expect(report.downtimeMs).toBeLessThan(15000);
  // Fresh connections land on either PgBouncer process of the endpoint: every one was re-pointed.
  const servedBy = await Promise.all(Array.from({ length: 10 }, async () => (await query<{ address: string; in_recovery: boolean }>(rehearsal.endpoints.readWrite, 'SELECT host(inet_server_addr()) AS address, pg_is_in_recovery() AS in_recovery'))[0]));
  expect(servedBy).toEqual(Array(10).fill({ address: rehearsal.endpoints.writer.host, in_recovery: false }));
});

test('GIVEN the failover is done WHEN Lambda containers write and read THEN writes reach the new writer and reads the remaining replica', async () => {
  // GIVEN the other replica follows the new writer, with quorum commit restored
  const status = await rehearsal.status();
  expect(status.replication.map((r) => [r.state, r.sync_state])).toEqual([['streaming', 'quorum']]);

  // WHEN
  const writes = await simulateInvocations({ handler: 'write', env: lambdaEnvironment(rehearsal.endpoints.readWrite, EndpointRole.READ_WRITE), containers: 2, invocationsPerContainer: 2, event: (c, i) => ({ id: 5000 + c * 10 + i }) });
  const reads = await simulateInvocations({ handler: 'read', env: lambdaEnvironment(rehearsal.endpoints.readOnly, EndpointRole.READ_ONLY), containers: 2, invocationsPerContainer: 1, event: () => ({ id: 5000 }) });

  // THEN
  expect([...writes, ...reads].filter((o) => o.error)).toEqual([]);
  for (const w of writes) expect(w.response).toMatchObject({ inserted: true, served_by: { address: rehearsal.endpoints.writer.host } });
  const replica = rehearsal.endpoints.replicas.find((r) => r.host !== status.health?.readWriteHosts[0] && status.nodes.find((n) => n.address === r.host)?.role === 'replica');
  for (const r of reads) expect(r.response).toMatchObject({ served_by: { address: replica?.host, in_recovery: true }, event: { id: 5000 } });
});
