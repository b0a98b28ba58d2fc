/** The loopback block plan: one block per user, each one a rehearsal accepts, handed out by the CLI. */
import { DEFAULT_ADDRESS_BLOCK, LOOPBACK_BLOCKS, resolveSettings, runRehearseCommand, validateSettings } from '../../lib/rehearsal';

const entries = Object.entries(LOOPBACK_BLOCKS);

test('GIVEN the block plan WHEN listing the blocks THEN no two users share one', () => {
  const byBlock = new Map<string, string[]>();
  for (const [user, { block }] of entries) byBlock.set(block, [...(byBlock.get(block) ?? []), user]);
  expect([...byBlock].filter(([, users]) => users.length > 1)).toEqual([]);
});

test.each(entries)('GIVEN the block of %s WHEN a rehearsal is configured on it THEN the settings are valid', (_user, { block }) => {
  expect(() => validateSettings(resolveSettings({ addressBlock: block }))).not.toThrow();
});

test('GIVEN no --address-block WHEN settings resolve THEN the default block is the plan\'s', () => {
  expect(DEFAULT_ADDRESS_BLOCK).toBe(LOOPBACK_BLOCKS.default.block);
  expect(resolveSettings({}).addressBlock).toBe(LOOPBACK_BLOCKS.default.block);
});

test('GIVEN a user WHEN asking `rehearse block` THEN it prints that user\'s block, and refuses an unknown user', async () => {
  await expect(runRehearseCommand(['block', 'terratest'])).resolves.toEqual({ output: LOOPBACK_BLOCKS.terratest.block, failed: false });
  await expect(runRehearseCommand(['block', 'nobody'])).rejects.toThrow(/block needs one of: default, /);
});
