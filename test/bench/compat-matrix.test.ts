/**
 * The compatibility matrix without a server: the README's generated section says what the committed
 * results file holds, the results file holds every probe, and the pieces that decide a verdict
 * (classification, the pool mode swap) do what they say.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMPAT_REGENERATE, pinningGaps, readCompatResults, readmeWithSection, README_MARKERS, renderCompatSection, type CompatResults } from '../../lib/bench/compat/matrix';
import { classify, COMPAT_PROBES, type CompatFeature } from '../../lib/bench/compat/probes';
import { RDS_PROXY_BEHAVIOUR } from '../../lib/bench/compat/rds-proxy';
import { PoolMode, SESSION_SERVER_RESET_QUERY } from '../../lib/model/pgbouncer-ini';
import { EndpointRole } from '../../lib/model/vocabulary';
import { standInFiles, standInProcess } from '../../lib/rehearsal';
import { DEFAULT_POOL_SETTINGS } from '../../lib/model/sizing';

const ROOT = join(__dirname, '..', '..');

describe('the README matrix and the results file', () => {
  test('GIVEN the committed results file WHEN the README section is rendered from it THEN README.md holds exactly that section', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const expected = readmeWithSection(readme, renderCompatSection(readCompatResults(ROOT)));
    if (expected !== readme) throw new Error(`README.md's compatibility matrix is stale vs docs/compat-matrix.json: run ${COMPAT_REGENERATE}`);
  });

  test('GIVEN the probes WHEN the results file is read THEN it has one entry per probe, in order, each with the probe\'s own expectation', () => {
    const results = readCompatResults(ROOT);
    expect(results.probes.map((p) => p.id)).toEqual(COMPAT_PROBES.map((p) => p.id));
    for (const probe of COMPAT_PROBES) expect(results.probes.find((p) => p.id === probe.id)).toMatchObject({ feature: probe.feature, does: probe.does, expected: probe.expected });
  });

  test('GIVEN the issue\'s feature classes WHEN the probes are listed THEN every class has a probe and RDS Proxy\'s documented behaviour', () => {
    const classes: CompatFeature[] = ['set', 'startup', 'prepared-sql', 'prepared-protocol', 'temp-table', 'advisory-lock', 'cursor-with-hold', 'sequence', 'listen-notify', 'copy', 'cancel', 'lost-connection', 'authentication'];
    expect([...new Set(COMPAT_PROBES.map((p) => p.feature))].sort()).toEqual([...classes].sort());
    for (const c of classes) expect(RDS_PROXY_BEHAVIOUR[c].note).not.toBe('');
    expect(COMPAT_PROBES.some((p) => p.feature === 'startup' && p.does.includes('options='))).toBe(true);
    expect(COMPAT_PROBES.some((p) => p.feature === 'prepared-protocol' && /invalid SQL/.test(p.does))).toBe(true);
  });

  test('GIVEN a README without the markers WHEN the section is written THEN the error names the markers and the command', () => {
    expect(() => readmeWithSection('# no matrix here\n', 'x')).toThrow(new RegExp(`${README_MARKERS.end}.*${COMPAT_REGENERATE}`));
  });

  test('GIVEN a result where transaction pooling loses a pinned feature silently WHEN rendered THEN the row and the summary say so', () => {
    const base = readCompatResults(ROOT);
    const listen = base.probes.find((p) => p.id === 'listen-notify')!;
    const changed: CompatResults = { ...base, probes: [{ ...listen, results: { ...listen.results, transaction: { status: 'differs', observed: { value: 'no notification in 1000 ms' } } } }] };
    const text = renderCompatSection(changed);
    expect(pinningGaps(changed).map((p) => p.id)).toEqual(['listen-notify']);
    expect(text).toContain('**silently differs**: no notification in 1000 ms (works on RDS Proxy by pinning)');
    expect(text).toMatch(/1 of the probes RDS Proxy pins for do not work through transaction pooling \(`listen-notify`\).*1 of them without an error/);
  });
});

describe('a probe\'s verdict', () => {
  test('GIVEN what PostgreSQL does and what a target did WHEN classified THEN the same passes, another error fails, another value silently differs', () => {
    expect(classify({ value: '7MB' }, { value: '7MB' })).toBe('passes');
    expect(classify({ value: '7MB' }, { value: '4MB' })).toBe('differs');
    expect(classify({ value: '7MB' }, { error: '08P01', message: 'unsupported startup parameter' })).toBe('fails');
    expect(classify({ error: '28P01', message: 'password authentication failed' }, { error: '28P01', message: 'password authentication failed' })).toBe('passes');
    expect(classify({ error: '28P01', message: 'password authentication failed' }, { error: '08P01', message: 'SASL authentication failed' })).toBe('fails');
    expect(classify({ error: '57014', message: 'canceling statement due to user request' }, { value: 'finished' })).toBe('differs');
  });
});

describe('session pooling from the rehearsal\'s ini', () => {
  const spec = {
    name: 'read-write', role: EndpointRole.READ_WRITE, listenAddress: '127.0.0.1', listenPort: 6432, database: 'kit', serverPort: 5432, maxConnections: 100, pool: DEFAULT_POOL_SETTINGS,
    maxClientConnections: 1000, processesPerTarget: 1, adminUser: 'kit_admin',
  };
  const render = (poolMode?: PoolMode): Map<string, string> => standInFiles({ ...spec, ...(poolMode === undefined ? {} : { poolMode }) }, [standInProcess({ ...spec, ...(poolMode === undefined ? {} : { poolMode }) }, 1, '127.0.0.1', 0)], '/w', { serverUser: 'ro', writer: '127.0.0.1' });

  test('GIVEN the rendered files in session pooling THEN they are the fleet\'s read/write session listener: the transaction files\' settings, then pool_mode and a reset with DEALLOCATE ALL', () => {
    const transaction = render().get('etc/pgbouncer/rw-1.ini')!.split('\n');
    const session = render(PoolMode.SESSION).get('etc/pgbouncer/sw-1.ini')!.split('\n');
    expect(session.slice(1, transaction.length - 1)).toEqual(transaction.slice(1, -1).map((l) => l.replace('rw-', 'sw-')));
    expect(session.slice(transaction.length - 1)).toEqual(['pool_mode = session', `server_reset_query = ${SESSION_SERVER_RESET_QUERY}`, '']);
    expect(render(PoolMode.SESSION).get('etc/pgbouncer/common.ini')).toBe(render().get('etc/pgbouncer/common.ini'));
    expect(render(PoolMode.TRANSACTION)).toEqual(render());
  });
});
