/**
 * A bootstrap that fails (a packages object whose checksums do not hold): the host's FAILURE signal to the
 * emulator's CloudFormation, no SUCCESS, and when it powered off.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createStack, readSignals, seedAws, type EmulatedSignal } from '../hosts/aws-emulator';
import type { PoolerHost, PoolerHostOptions } from '../pooler-host-types';
import { isAlive, killHost, logTail, stopProcess } from '../processes';
import type { Rehearsal } from '../rehearsal';
import { waitUntil } from './clients';

/**
 * How long a host whose bootstrap fails may take to signal FAILURE and power off: its boot, the packages
 * object's download with the fetcher's retries, the install step refusing it. A fraction of what
 * CloudFormation waits for a signal (FLEET_HOST_SIGNAL_TIMEOUT_SECONDS in pgbouncer-rollout.ts, 900 s): the
 * FAILURE, not the timeout, stops the rollout.
 */
export const BOOTSTRAP_FAILURE_BOUND_MS = 120_000;

/** The logical id the drill's stack gives the group its hosts signal (as the synthesized template's). */
const DRILL_GROUP = 'PoolerHostsASG0D1E2F3A';

export interface BootstrapFailureDrillFigures {
  readonly host: string;
  readonly instanceId: string;
  /** When the host had powered off (its systemd-nspawn exited), after its boot began (undefined: not within the bound). */
  readonly poweredOffAfterMs: number | undefined;
  readonly boundMs: number;
  /** The signals the emulator's CloudFormation received from this instance. */
  readonly failureSignals: number;
  readonly successSignals: number;
  readonly signals: ReadonlyArray<EmulatedSignal>;
  /** The host's last console lines (what the failed step said). */
  readonly console: string;
}

/**
 * Boots a new host of the fleet whose packages object does not hold (its SHA256SUMS names another file's hash,
 * so the install step refuses it) and whose user data signals a stack made for the drill in the emulator's
 * CloudFormation, as the rollout's hosts do; waits until it powers off and reads the stack's signals. `fleetHost`
 * is a host of the fleet already started (the emulator, the packages bucket).
 */
export async function poolerBootstrapFailureDrill(r: Rehearsal, fleetHost: PoolerHost, options: PoolerHostOptions): Promise<BootstrapFailureDrillFigures> {
  const caFile = r.endpoints.writer.caFile;
  const dir = join(r.workDir, 'bootstrap-failure-drill');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, 'apk-host'), 'not the agent\n');
  writeFileSync(join(dir, 'SHA256SUMS'), `${'0'.repeat(64)}  apk-host\n`);
  execFileSync('tar', ['-cf', join(dir, 'broken.tar'), '-C', dir, 'SHA256SUMS', 'apk-host']);
  const key = 'pooler/drill-broken.tar';
  await seedAws(fleetHost.aws, caFile, { objects: [{ bucket: fleetHost.values.PackagesBucket!, key, file: join(dir, 'broken.tar') }] });
  // moto's CloudFormation holds the stack only as something to signal (it is no judge of templates).
  const stack = `apk-bootstrap-drill-${Date.now()}`;
  await createStack(fleetHost.aws, caFile, stack, { Resources: { [DRILL_GROUP]: { Type: 'AWS::CloudFormation::WaitConditionHandle' } } });
  const bootAt = Date.now();
  const booting = await r.bootPoolerHost(options, { PackagesKey: key, SignalStack: stack, SignalResource: DRILL_GROUP, SignalRegion: fleetHost.aws.spec.region });
  const instanceId = booting.booted.spec.instanceId;
  try {
    const off = await waitUntil(() => !isAlive(booting.booted.container.pid), BOOTSTRAP_FAILURE_BOUND_MS - (Date.now() - bootAt), 250);
    const signals = (await readSignals(fleetHost.aws, caFile, stack)).filter((s) => s.reason.endsWith(instanceId));
    return {
      host: booting.name,
      instanceId,
      poweredOffAfterMs: off === undefined ? undefined : Date.now() - bootAt,
      boundMs: BOOTSTRAP_FAILURE_BOUND_MS,
      failureSignals: signals.filter((s) => s.status === 'FAILURE').length,
      successSignals: signals.filter((s) => s.status === 'SUCCESS').length,
      signals,
      console: logTail(booting.booted.container.logFile, 8),
    };
  } finally {
    // A host still running past the bound is stopped here; its metadata service always.
    if (isAlive(booting.booted.container.pid)) await killHost(booting.booted.container);
    await stopProcess(booting.booted.imds);
  }
}
