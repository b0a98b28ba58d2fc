/**
 * A refusal before anything starts that needs the rehearsal's programs: `up` checks them (PgBouncer's build,
 * PostgreSQL) before the addresses, so a taken address is only reached where they are installed.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { AddressInUseError, addressPlan, Rehearsal, resolveSettings, WorkDirLayout } from '../../../lib/rehearsal';
import { SUITE_BLOCKS } from '../../support/loopback-blocks';
import { scratchDirPerTest } from '../../helpers/scratch-dir';

describe('refusals before anything starts, with the programs installed', () => {
  const addressBlock = SUITE_BLOCKS.configSuite.block;
  const workDir = scratchDirPerTest('rehearsal-config-');

  test('GIVEN the read-only endpoint address is taken WHEN up THEN AddressInUseError names it and nothing starts', async () => {
    // GIVEN
    const plan = addressPlan(resolveSettings({ addressBlock }));
    const squatter: Server = createServer();
    await new Promise<void>((resolve) => squatter.listen({ host: plan.readOnly, port: 5432 }, resolve));
    try {
      // WHEN
      const up = Rehearsal.up({ workDir: join(workDir(), 'r'), addressBlock });

      // THEN
      await expect(up).rejects.toThrow(AddressInUseError);
      await expect(up).rejects.toThrow(new RegExp(`read-only endpoint address ${plan.readOnly.replace(/\./g, '\\.')}:5432 is busy \\(EADDRINUSE\\)`));
      expect(existsSync(new WorkDirLayout(join(workDir(), 'r')).stateFile)).toBe(false);
    } finally {
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
    }
  });
});
