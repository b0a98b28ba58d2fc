/**
 * What `rehearse up` says it does not reproduce, without a deployment: its endpoints are PgBouncer in
 * transaction pooling, standing in for an RDS Proxy that pins sessions, and the matrix it points to
 * shows, per feature, where an application relying on pinning breaks.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pinningGaps, readCompatResults } from '../../lib/bench/compat/matrix';
import { formatUpStandIns } from '../../lib/rehearsal';

const ROOT = join(__dirname, '..', '..');

describe('the stand-ins rehearse up lists', () => {
  test('GIVEN no deployment WHEN up prints its stand-ins THEN session pinning is among them, with PgBouncer standing in and the matrix named', () => {
    const text = formatUpStandIns(undefined);
    expect(text).toMatch(/^not reproduced here, and what stands in:\n {2}- RDS Proxy pinning a client's session/);
    expect(text).toMatch(/stand-in: PgBouncer in transaction pooling, which does not pin/);
    expect(text).toContain('README.md, "What works through the pooling tier"');
  });

  test('GIVEN the README WHEN the stand-in points to its matrix THEN that section exists and lists, from the probes, the pinned features the stand-in breaks', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('### What works through the pooling tier');
    const gaps = pinningGaps(readCompatResults(ROOT)).map((p) => p.id);
    // Each class the stand-in text names has a probe that shows it breaking through transaction pooling.
    expect(gaps).toEqual(expect.arrayContaining(['set-session', 'temp-table', 'advisory-lock', 'prepare-sql', 'cursor-with-hold', 'currval', 'listen-notify']));
  });
});
