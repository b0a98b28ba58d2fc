/**
 * Shared by the live rehearsal suites: a work dir per suite and a check that nothing the rehearsal
 * started is left running. Each suite runs on its own loopback block (SUITE_BLOCKS) so suites
 * running in parallel never collide.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive, Rehearsal, type RehearsalSettings, type RehearsedDeployment } from '../../../lib/rehearsal';
import { SUITE_BLOCKS, type SuiteBlockUser } from '../../support/loopback-blocks';

/** Small and fast: 2 replicas, fsync off, short borrow timeout; of `deployment` when given. */
export async function startRehearsal(blockUser: SuiteBlockUser, overrides: RehearsalSettings = {}, deployment?: RehearsedDeployment): Promise<{ rehearsal: Rehearsal; workDir: string; pids: number[] }> {
  const workDir = mkdtempSync(join(tmpdir(), 'rehearsal-test-'));
  // The servers run as postgres and must traverse it.
  chmodSync(workDir, 0o755);
  const settings: RehearsalSettings = {
    workDir,
    addressBlock: SUITE_BLOCKS[blockUser].block,
    replicas: 2,
    maxConnections: 40,
    pool: { maxConnectionsPercent: 50, maxIdleConnectionsPercent: 10, connectionBorrowTimeoutSeconds: 30 },
    healthCheckIntervalMs: 250,
    ...overrides,
  };
  const rehearsal = await Rehearsal.up(deployment === undefined ? settings : { settings, deployment });
  const pids = (await rehearsal.status()).processes.map((p) => p.pid);
  return { rehearsal, workDir, pids };
}

/** down(), then proof that no tracked pid runs any more; removes the work dir. */
export async function stopRehearsal(started: { rehearsal: Rehearsal; workDir: string; pids: number[] } | undefined): Promise<void> {
  if (started === undefined) return;
  try {
    await started.rehearsal.down();
    const alive = started.pids.filter((pid) => isAlive(pid));
    if (alive.length > 0) throw new Error(`still running after down: ${alive.join(', ')}`);
  } finally {
    rmSync(started.workDir, { recursive: true, force: true });
  }
}
