/**
 * The compatibility probes run for real (PostgreSQL 15 and the kit's PgBouncer 1.25.2 on 127.0.0.1, about
 * 10 s): every probe passes directly (its expectation is PostgreSQL's own behaviour), and what each
 * target does now is what the committed results file, and so the README's matrix, says.
 */
import { join } from 'node:path';
import { COMPAT_REGENERATE, readCompatResults, runCompatProbes, type CompatResults } from '../../../lib/bench/compat/matrix';
import { isAlive, startCompatStand, type CompatStand } from '../../../lib/rehearsal';

const ROOT = join(__dirname, '..', '..', '..');

describe('the compatibility probes, run', () => {
  let stand: CompatStand | undefined;
  let measured: CompatResults;

  beforeAll(async () => {
    stand = await startCompatStand();
    measured = await runCompatProbes(stand);
  }, 60000);

  afterAll(async () => {
    await stand?.stop();
  }, 30000);

  test('GIVEN PostgreSQL directly WHEN every probe runs THEN each does what its expectation says', () => {
    expect(measured.probes.filter((p) => p.results.direct.status !== 'passes').map((p) => `${p.id}: ${JSON.stringify(p.results.direct.observed)}`)).toEqual([]);
  });

  test('GIVEN the committed results file WHEN the probes run again THEN every target does what it records', () => {
    const committed = readCompatResults(ROOT);
    const drift = measured.probes.flatMap((p) => {
      const before = committed.probes.find((c) => c.id === p.id);
      return (['direct', 'transaction', 'session'] as const)
        .filter((t) => JSON.stringify(before?.results[t]) !== JSON.stringify(p.results[t]))
        .map((t) => `${p.id} via ${t}: recorded ${JSON.stringify(before?.results[t])}, now ${JSON.stringify(p.results[t])}`);
    });
    if (drift.length > 0) throw new Error(`docs/compat-matrix.json no longer matches what runs (run ${COMPAT_REGENERATE}):\n  ${drift.join('\n  ')}`);
  });

  test('GIVEN session pooling WHEN compared with transaction pooling THEN it passes every probe transaction pooling fails except what the shared ini refuses at login', () => {
    const onlySession = measured.probes.filter((p) => p.results.transaction.status !== 'passes' && p.results.session.status === 'passes').map((p) => p.id);
    expect(onlySession).toEqual(expect.arrayContaining(['set-session', 'temp-table', 'advisory-lock', 'cursor-with-hold', 'currval', 'listen-notify', 'prepare-sql']));
  });

  test('GIVEN the stand WHEN stopped THEN none of its processes runs', async () => {
    const s = stand!;
    expect(s.pids.length).toBe(3);
    expect(s.pids.every((pid) => isAlive(pid))).toBe(true);
    const pids = [...s.pids];
    await s.stop();
    stand = undefined;
    expect(pids.filter((pid) => isAlive(pid))).toEqual([]);
  }, 30000);
});
