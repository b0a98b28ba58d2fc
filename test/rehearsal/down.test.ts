/**
 * `down` is idempotent: through the CLI's code path (runRehearseCommand) and the Rehearsal API it exits
 * cleanly and says "nothing to stop" when there is no work dir, a work dir without a rehearsal, or a
 * rehearsal whose processes are all gone; and a second `down` after a real one stops nothing.
 * The processes here are real (a detached `sleep`), tracked in the process table beside a state file as the
 * rehearsal tracks its servers; the live suites do the same with a whole rehearsal.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive, Rehearsal, runRehearseCommand, WorkDirLayout, type TrackedProcess } from '../../lib/rehearsal';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'rehearsal-down-'));
  chmodSync(root, 0o755);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const SLEEP = spawnSync('sh', ['-c', 'command -v sleep'], { encoding: 'utf8' }).stdout.trim();

/** A state file and a process table listing `processes`, as `Rehearsal.up` writes them (only what `down` reads is filled in). */
function writeStateTracking(workDir: string, processes: TrackedProcess[]): WorkDirLayout {
  const layout = new WorkDirLayout(workDir);
  mkdirSync(layout.logsDir, { recursive: true });
  writeFileSync(layout.stateFile, JSON.stringify({ version: 1, startedAt: new Date().toISOString(), phase: 'up' }));
  writeFileSync(layout.processesFile, JSON.stringify({ processes }));
  return layout;
}

/** A real process in its own group, like the rehearsal's servers. */
function startSleeper(workDir: string): TrackedProcess {
  const child = spawn(SLEEP, ['30'], { detached: true, stdio: 'ignore' });
  child.unref();
  return { name: 'sleeper', kind: 'postgres', pid: child.pid!, program: SLEEP, logFile: join(workDir, 'logs', 'sleeper.log') };
}

describe('down with nothing running', () => {
  test('GIVEN no work dir WHEN `rehearse down` runs THEN it succeeds, says there is nothing to stop and creates nothing', async () => {
    const workDir = join(root, 'never-started');

    // WHEN
    const result = await runRehearseCommand(['down', '--work-dir', workDir]);

    // THEN
    expect(result).toEqual({ output: `nothing to stop in ${workDir}: no rehearsal there`, failed: false });
    expect(existsSync(workDir)).toBe(false);
  });

  test('GIVEN a work dir without a state file WHEN down runs through the CLI and the API THEN both report nothing to stop', async () => {
    // WHEN / THEN
    await expect(runRehearseCommand(['down', '--work-dir', root])).resolves.toEqual({ output: `nothing to stop in ${root}: no rehearsal there`, failed: false });
    await expect(Rehearsal.downIn(root)).resolves.toEqual({ workDir: root, stopped: [], hadState: false });
  });

  test('GIVEN a state whose processes have all exited WHEN down runs THEN it stops nothing, removes the state, and a second down finds no rehearsal', async () => {
    // GIVEN a tracked process that has already exited (a rehearsal after a reboot)
    const exited = spawnSync(SLEEP, ['0']);
    expect(exited.status).toBe(0);
    const layout = writeStateTracking(root, [{ name: 'writer', kind: 'postgres', pid: exited.pid!, program: SLEEP, logFile: join(root, 'logs', 'writer.log') }]);

    // WHEN
    const first = await runRehearseCommand(['down', '--work-dir', root]);
    const second = await runRehearseCommand(['down', '--work-dir', root]);

    // THEN
    expect(first.output).toBe(`nothing to stop in ${root}: no process of its rehearsal was running (its state and data are removed)`);
    expect(existsSync(layout.stateFile)).toBe(false);
    expect(existsSync(layout.processesFile)).toBe(false);
    expect(existsSync(layout.logsDir)).toBe(true);
    expect(second.output).toBe(`nothing to stop in ${root}: no rehearsal there`);
  });
});

describe('down twice', () => {
  test('GIVEN a running tracked process WHEN down runs twice through the CLI THEN the first stops it by pid and the second stops nothing', async () => {
    // GIVEN
    const sleeper = startSleeper(root);
    writeStateTracking(root, [sleeper]);
    try {
      // WHEN
      const first = await runRehearseCommand(['down', '--work-dir', root]);
      const second = await runRehearseCommand(['down', '--work-dir', root]);

      // THEN
      expect(first).toEqual({ output: 'stopped sleeper; nothing left running', failed: false });
      expect(isAlive(sleeper.pid)).toBe(false);
      expect(second).toEqual({ output: `nothing to stop in ${root}: no rehearsal there`, failed: false });
    } finally {
      if (isAlive(sleeper.pid)) process.kill(-sleeper.pid, 'SIGKILL');
    }
  });

  test('GIVEN a running tracked process WHEN Rehearsal.downIn runs twice THEN the second call reports nothing stopped', async () => {
    // GIVEN
    const sleeper = startSleeper(root);
    writeStateTracking(root, [sleeper]);
    try {
      // WHEN
      const first = await Rehearsal.downIn(root);
      const second = await Rehearsal.downIn(root);

      // THEN
      expect(first).toEqual({ workDir: root, stopped: ['sleeper'], hadState: true });
      expect(second).toEqual({ workDir: root, stopped: [], hadState: false });
      expect(isAlive(sleeper.pid)).toBe(false);
    } finally {
      if (isAlive(sleeper.pid)) process.kill(-sleeper.pid, 'SIGKILL');
    }
  });
});
