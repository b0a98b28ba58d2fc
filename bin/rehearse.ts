/**
 * The local rehearsal's CLI.
 *
 *   npx ts-node --transpile-only bin/rehearse.ts up [--replicas N] [--async] [--work-dir DIR]
 *       [--address-block 127.0.10] [--port 5432] [--max-connections N] [--sizing-max-connections N]
 *       [--max-connections-percent P] [--max-idle-connections-percent P] [--borrow-timeout S]
 *       [--max-client-connections N] [--fsync] [--no-peers]
 *   npx ts-node --transpile-only bin/rehearse.ts status [--work-dir DIR] [--json]
 *   npx ts-node --transpile-only bin/rehearse.ts outputs [--work-dir DIR] [--json]   (endpoint outputs as JSON, like `terraform output -json`)
 *   npx ts-node --transpile-only bin/rehearse.ts down [--work-dir DIR]
 *   npx ts-node --transpile-only bin/rehearse.ts drill [--work-dir DIR]     (writer failover drill)
 *
 * Exit codes: 0 ok, 1 failure, 2 bad usage or settings (nothing was started).
 */
import { DEFAULT_POOL_SETTINGS } from '../lib/model/sizing';
import { runFailoverDrill } from '../lib/rehearsal/drill';
import { MissingBinaryError, RehearsalConfigError, AddressInUseError, RehearsalStateError } from '../lib/rehearsal/errors';
import { Rehearsal, type Endpoint } from '../lib/rehearsal/rehearsal';
import { DEFAULT_WORK_DIR, type RehearsalSettings } from '../lib/rehearsal/settings';
import { formatStatus } from '../lib/rehearsal/status-format';

class UsageError extends Error {}

const VALUE_FLAGS = ['--replicas', '--work-dir', '--address-block', '--port', '--max-connections', '--sizing-max-connections', '--max-connections-percent', '--max-idle-connections-percent', '--borrow-timeout', '--max-client-connections'] as const;
const BOOLEAN_FLAGS = ['--async', '--fsync', '--no-peers', '--json'] as const;

interface Parsed {
  command: string;
  values: Map<string, string>;
  flags: Set<string>;
}

export function parseArgs(argv: string[]): Parsed {
  const [command, ...rest] = argv;
  if (command === undefined || !['up', 'status', 'outputs', 'down', 'drill'].includes(command)) throw new UsageError(`unknown command ${command ?? '(none)'}: use up, status, outputs, down or drill`);
  const values = new Map<string, string>();
  const flags = new Set<string>();
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const [name, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    if ((VALUE_FLAGS as readonly string[]).includes(name)) {
      const value = inline ?? rest[++i];
      if (value === undefined) throw new UsageError(`${name} needs a value`);
      values.set(name, value);
    } else if ((BOOLEAN_FLAGS as readonly string[]).includes(name)) {
      flags.add(name);
    } else {
      throw new UsageError(`unknown option ${arg}; options: ${[...VALUE_FLAGS, ...BOOLEAN_FLAGS].join(' ')}`);
    }
  }
  return { command, values, flags };
}

function numberFlag(p: Parsed, name: string): number | undefined {
  const v = p.values.get(name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new RehearsalConfigError([`${name} ${v} is not a whole number: pass e.g. ${name} 2`]);
  return Number(v);
}

export function settingsFrom(p: Parsed): RehearsalSettings {
  const percent = numberFlag(p, '--max-connections-percent');
  const idle = numberFlag(p, '--max-idle-connections-percent');
  const borrow = numberFlag(p, '--borrow-timeout');
  const optional = <K extends keyof RehearsalSettings>(key: K, value: RehearsalSettings[K] | undefined): Partial<RehearsalSettings> => (value === undefined ? {} : { [key]: value });
  return {
    ...optional('replicas', numberFlag(p, '--replicas')),
    ...optional('workDir', p.values.get('--work-dir')),
    ...optional('addressBlock', p.values.get('--address-block')),
    ...optional('port', numberFlag(p, '--port')),
    ...optional('maxConnections', numberFlag(p, '--max-connections')),
    ...optional('sizingMaxConnections', numberFlag(p, '--sizing-max-connections')),
    ...optional('maxClientConnections', numberFlag(p, '--max-client-connections')),
    ...(p.flags.has('--async') ? { synchronous: false } : {}),
    ...(p.flags.has('--fsync') ? { fsync: true } : {}),
    ...(p.flags.has('--no-peers') ? { peers: false } : {}),
    ...(percent ?? idle ?? borrow) !== undefined
      ? {
          pool: {
            maxConnectionsPercent: percent ?? DEFAULT_POOL_SETTINGS.maxConnectionsPercent,
            maxIdleConnectionsPercent: idle ?? Math.min(DEFAULT_POOL_SETTINGS.maxIdleConnectionsPercent, percent ?? 100),
            connectionBorrowTimeoutSeconds: borrow ?? DEFAULT_POOL_SETTINGS.connectionBorrowTimeoutSeconds,
          },
        }
      : {},
  };
}

async function main(argv: string[]): Promise<void> {
  const parsed = parseArgs(argv);
  const workDir = parsed.values.get('--work-dir') ?? DEFAULT_WORK_DIR;
  switch (parsed.command) {
    case 'up': {
      const started = Date.now();
      const rehearsal = await Rehearsal.up(settingsFrom(parsed));
      process.stdout.write(`rehearsal up in ${((Date.now() - started) / 1000).toFixed(1)} s\n\n${formatStatus(await rehearsal.status())}\n`);
      return;
    }
    case 'status': {
      const status = await Rehearsal.attach(workDir).status();
      process.stdout.write(parsed.flags.has('--json') ? `${JSON.stringify({ ...status, endpoints: undefined }, null, 2)}\n` : `${formatStatus(status)}\n`);
      return;
    }
    case 'outputs': {
      // What a deployment's outputs give a client (Terratest's validate stage reads these); always JSON.
      const { readWrite, readOnly } = Rehearsal.attach(workDir).endpoints;
      const output = (e: Endpoint): Record<string, string | number> => ({ host: e.host, port: e.port, database: e.database, user: e.user, password: e.password, ca_file: e.caFile });
      process.stdout.write(`${JSON.stringify({ read_write: output(readWrite), read_only: output(readOnly) }, null, 2)}\n`);
      return;
    }
    case 'down': {
      const { stopped } = await Rehearsal.attach(workDir).down();
      process.stdout.write(`stopped ${stopped.join(', ')}; nothing left running\n`);
      return;
    }
    case 'drill': {
      const report = await runFailoverDrill(Rehearsal.attach(workDir));
      process.stdout.write(
        `failover ${report.failover.oldWriter} -> ${report.failover.newWriter}: promoted after ${report.failover.promotedAfterMs} ms, read/write endpoint re-pointed after ${report.failover.repointedAfterMs} ms\n` +
          `writes: ${report.acknowledged} acknowledged, ${report.missing.length} missing afterwards, ${report.failedAttempts} failed attempts retried; client-visible downtime ${report.downtimeMs} ms\n`,
      );
      if (report.missing.length > 0) process.exitCode = 1;
      return;
    }
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    const usage = err instanceof UsageError || err instanceof RehearsalConfigError || err instanceof MissingBinaryError || err instanceof AddressInUseError || err instanceof RehearsalStateError;
    process.stderr.write(`rehearse: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = usage ? 2 : 1;
  });
}
