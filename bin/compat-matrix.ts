#!/usr/bin/env node
/**
 * Runs the compatibility probes (PostgreSQL directly, PgBouncer in transaction and in session pooling),
 * writes docs/compat-matrix.json and the README's generated section from it.
 *
 *   npx ts-node --transpile-only bin/compat-matrix.ts          # measure, then write both
 *   npx ts-node --transpile-only bin/compat-matrix.ts --check  # fail when the README is stale vs the results file
 */
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { COMPAT_REGENERATE, measureCompatibility, readCompatResults, readmeWithSection, renderCompatSection, writeCompatMatrix } from '../lib/bench/compat/matrix';

const root = join(__dirname, '..');

async function main(): Promise<number> {
  if (process.argv.includes('--check')) {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    if (readmeWithSection(readme, renderCompatSection(readCompatResults(root))) !== readme) {
      process.stderr.write(`README.md's compatibility matrix is stale vs docs/compat-matrix.json: run ${COMPAT_REGENERATE}\n`);
      return 1;
    }
    process.stdout.write('README.md\'s compatibility matrix matches docs/compat-matrix.json\n');
    return 0;
  }
  const started = Date.now();
  const results = await measureCompatibility((line) => process.stderr.write(`${line}\n`));
  const direct = results.probes.filter((p) => p.results.direct.status !== 'passes');
  if (direct.length > 0) {
    // A probe whose direct run differs from its expectation is wrong, not the pooler: nothing is written.
    process.stderr.write(`not written: probes that do not pass directly (fix their expectation or the probe): ${direct.map((p) => `${p.id} (${JSON.stringify(p.results.direct.observed)})`).join(', ')}\n`);
    return 1;
  }
  writeCompatMatrix(root, results);
  process.stdout.write(`wrote docs/compat-matrix.json and README.md's matrix: ${results.probes.length} probes in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return 0;
}

main().then((code) => process.exit(code), (err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
