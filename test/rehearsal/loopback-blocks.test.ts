/**
 * The loopback block plan: the product's own block (the hand-started rehearsal), the bench's and the demo's,
 * and the suites' (test/support/loopback-blocks.ts): one block per user across all of them, each one a
 * rehearsal accepts.
 */
import * as fs from 'fs';
import * as path from 'path';
import { BENCH_BLOCKS } from '../../lib/bench/blocks';
import { DEFAULT_ADDRESS_BLOCK, DEFAULT_LOOPBACK_BLOCK, resolveSettings, validateSettings } from '../../lib/rehearsal';
import { SUITE_BLOCKS } from '../support/loopback-blocks';

const entries: Array<[string, { block: string }]> = [
  ['default', DEFAULT_LOOPBACK_BLOCK],
  ...Object.entries(BENCH_BLOCKS).map(([user, b]): [string, { block: string }] => [`bench ${user}`, b]),
  ...Object.entries(SUITE_BLOCKS).map(([user, b]): [string, { block: string }] => [`suite ${user}`, b]),
];

test('GIVEN the block plan WHEN listing the blocks THEN no two users share one', () => {
  const byBlock = new Map<string, string[]>();
  for (const [user, { block }] of entries) byBlock.set(block, [...(byBlock.get(block) ?? []), user]);
  expect(entries.length).toBeGreaterThan(20);
  expect([...byBlock].filter(([, users]) => users.length > 1)).toEqual([]);
});

test.each(entries)('GIVEN the block of %s WHEN a rehearsal is configured on it THEN the settings are valid', (_user, { block }) => {
  expect(() => validateSettings(resolveSettings({ addressBlock: block }))).not.toThrow();
});

test('GIVEN no --address-block WHEN settings resolve THEN the default block is the product\'s', () => {
  expect(DEFAULT_ADDRESS_BLOCK).toBe(DEFAULT_LOOPBACK_BLOCK.block);
  expect(resolveSettings({}).addressBlock).toBe(DEFAULT_LOOPBACK_BLOCK.block);
});

test('GIVEN the Go rehearsal test WHEN it names its block THEN it is the plan\'s terratest block', () => {
  const go = fs.readFileSync(path.join(__dirname, '..', 'terratest', 'rehearsal_test.go'), 'utf8');
  expect(/^const rehearsalAddressBlock = "([\d.]+)"$/m.exec(go)?.[1]).toBe(SUITE_BLOCKS.terratest.block);
});

test('GIVEN the product WHEN its sources are read THEN none names a test suite', () => {
  const files = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
  const naming = files(path.join(__dirname, '..', '..', 'lib', 'rehearsal')).filter((f) => /test\/[\w/-]+\.test\.ts|terratest/.test(fs.readFileSync(f, 'utf8')));
  expect(naming).toEqual([]);
});
