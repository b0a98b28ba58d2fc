/**
 * The `rehearse` commands (`npx aurora-proxy-kit rehearse <command>`; their options and help: cli-spec.ts):
 * up, status, outputs, down, drill, topology.
 *
 * Exit codes: 0 ok, 1 failure, 2 bad usage or settings (nothing was started).
 */
import { CliUsageError, parseOptions, TOOL } from '../cli/spec';
import { DEFAULT_POOL_SETTINGS } from '../model';
import { REHEARSE_COMMANDS, REHEARSE_OPTIONS, type RehearseCommand } from './cli-spec';
import { formatDownReport } from './down';
import { runFailoverDrill } from './drill';
import type { DeploymentFleet } from './pooler-fleet';
import { poolerFailoverDrill } from './pooler-drills/failover';
import { AddressInUseError, MissingBinaryError, RehearsalConfigError, RehearsalStateError } from './errors';
import { Rehearsal, type UpProgress } from './rehearsal';
import { formatUpStandIns, rehearsalFromDeployment } from './deployment';
import { AssemblyInputError } from '../cloud-assembly';
import { formatTopology, loadTopology, type TerraformWorkingDir } from './topology';
import { DEFAULT_WORK_DIR, type RehearsalNetwork, type RehearsalSettings, type RehearsalSpec } from './settings';
import { formatStatus } from './status-format';
import { EndpointRole } from '../../lambda/src/environment';
import { rehearsalNetwork, type RehearsalConnectionNames } from './network/rehearsal-network';
import type { Endpoint, Endpoints, RehearsalStatus } from './types';

export class UsageError extends CliUsageError {}

export interface ParsedArgs {
  readonly command: RehearseCommand;
  readonly values: Map<string, string>;
  readonly flags: Set<string>;
}

export function parseArgs(argv: string[]): ParsedArgs {
  const [command, ...rest] = argv;
  if (command === undefined || !(REHEARSE_COMMANDS as readonly string[]).includes(command)) throw new UsageError(`unknown command ${command ?? '(none)'}: use ${REHEARSE_COMMANDS.slice(0, -1).join(', ')} or ${REHEARSE_COMMANDS[REHEARSE_COMMANDS.length - 1]} (${TOOL} rehearse --help)`);
  const { values, flags } = parseOptions(rest, { options: REHEARSE_OPTIONS, commandName: `rehearse ${command}`, subcommand: command, maxOperands: 0 }, UsageError);
  const from = values.get('--from');
  if (command === 'topology' && (from === undefined || from.trim() === '')) throw new UsageError('topology needs --from <cdk.out directory | plan.json> (terraform show -json <planfile> > plan.json)');
  if (from !== undefined && from.trim() === '') throw new UsageError(`--from needs a cdk.out directory or a plan's JSON (terraform show -json <planfile> > plan.json)`);
  return { command: command as RehearseCommand, values, flags };
}

function decimalFlag(p: ParsedArgs, name: string): number | undefined {
  const v = p.values.get(name);
  if (v === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(v)) throw new RehearsalConfigError([`${name} ${v} is not a number: pass e.g. ${name} 0.1 (0 = no CPU budgets)`]);
  return Number(v);
}

function numberFlag(p: ParsedArgs, name: string): number | undefined {
  const v = p.values.get(name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new RehearsalConfigError([`${name} ${v} is not a whole number: pass e.g. ${name} 2`]);
  return Number(v);
}

/** --terraform-dir with TF_DATA_DIR as Terraform reads it; undefined leaves both to their defaults. */
function terraformDir(p: ParsedArgs): TerraformWorkingDir | undefined {
  const dir = p.values.get('--terraform-dir');
  const dataDir = process.env.TF_DATA_DIR;
  return dir === undefined ? undefined : { dir, ...(dataDir !== undefined && dataDir !== '' ? { dataDir } : {}) };
}

export function specFrom(p: ParsedArgs): RehearsalSpec {
  const from = p.values.get('--from');
  if (from === undefined) return { settings: flagSettings(p) };
  // The deployment fixes replicas, pool, port, endpoints and consumers; flags given too go on top.
  const { settings, deployment } = rehearsalFromDeployment(from, terraformDir(p));
  return { settings: { ...settings, ...flagSettings(p) }, deployment };
}

function flagSettings(p: ParsedArgs): RehearsalSettings {
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
    // Checked by validateSettings, which names the values it takes.
    ...optional('network', p.values.get('--network') as RehearsalNetwork | undefined),
    ...optional('coresPerVcpu', decimalFlag(p, '--cores-per-vcpu')),
    ...optional('poolerProcesses', numberFlag(p, '--pooler-processes')),
    ...optional('poolerVcpus', numberFlag(p, '--pooler-vcpus')),
    ...(p.flags.has('--async') ? { synchronous: false } : {}),
    ...(p.flags.has('--fsync') ? { fsync: true } : {}),
    ...(p.flags.has('--no-comparison-proxies') || p.flags.has('--no-peers') ? { comparisonProxies: false } : {}),
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

/**
 * What a deployment's outputs give a client (Terratest's validate stage reads read_write and read_only),
 * and, with network 'namespaces', `aws`: the AWS-shaped names to connect by (the deployment's, after
 * `up --from`) and the namespace each endpoint's clients run in; null on loopback, where they do not resolve.
 */
export function formatOutputs(endpoints: Endpoints, names: RehearsalConnectionNames | null): string {
  const { readWrite, readOnly } = endpoints;
  const output = (e: Endpoint): Record<string, string | number> => ({ host: e.host, port: e.port, database: e.database, user: e.user, password: e.password, ca_file: e.caFile });
  const aws =
    names === null
      ? null
      : {
          region: names.region,
          data_namespace: names.dataNamespace,
          consumer_namespaces: names.consumerNamespaces,
          cluster_endpoint: names.cluster.writerEndpoint,
          reader_endpoint: names.cluster.readerEndpoint,
          proxy_default_endpoint: names.proxy.defaultEndpoint,
          // Every endpoint listens on its role's port, as RDS Proxy's do.
          endpoints: names.endpoints.map((e) => ({
            name: e.name,
            role: e.role,
            vpc: e.vpc,
            namespace: e.namespace,
            host: e.host,
            port: (e.role === EndpointRole.READ_ONLY ? readOnly : readWrite).port,
          })),
        };
  return JSON.stringify({ read_write: output(readWrite), read_only: output(readOnly), aws }, null, 2);
}

/** `status --json`: the status without the endpoints' passwords, with the AWS-shaped names to connect by (formatOutputs). */
export function formatStatusJson(status: RehearsalStatus): string {
  return JSON.stringify({ ...status, endpoints: undefined, aws: rehearsalNetwork(status.settings, status.deployment).connectionNames() }, null, 2);
}

/** Runs one command; returns what it prints and whether it failed its own check (drill). `progress` hears `up`'s phases. */
export async function runRehearseCommand(argv: string[], progress?: UpProgress): Promise<{ output: string; failed: boolean }> {
  const parsed = parseArgs(argv);
  const workDir = parsed.values.get('--work-dir') ?? DEFAULT_WORK_DIR;
  switch (parsed.command) {
    case 'up': {
      const started = Date.now();
      const rehearsal = await Rehearsal.up(specFrom(parsed), progress);
      return { output: `rehearsal up in ${((Date.now() - started) / 1000).toFixed(1)} s\n\n${formatUpStandIns(rehearsal.rehearsed.deployment)}\n\n${formatStatus(await rehearsal.status())}`, failed: false };
    }
    case 'status': {
      const status = await Rehearsal.attach(workDir).status();
      return { output: parsed.flags.has('--json') ? formatStatusJson(status) : formatStatus(status), failed: false };
    }
    case 'outputs': {
      const rehearsal = Rehearsal.attach(workDir);
      return { output: formatOutputs(rehearsal.endpoints, rehearsal.network.connectionNames()), failed: false };
    }
    case 'down':
      // Not attach(): down must also succeed (and say so) when nothing runs in the work dir.
      return { output: formatDownReport(await Rehearsal.downIn(workDir)), failed: false };
    case 'drill': {
      const rehearsal = Rehearsal.attach(workDir);
      const fleet = rehearsal.deploymentFleet();
      if (fleet !== undefined) return fleetDrill(rehearsal, fleet);
      const report = await runFailoverDrill(rehearsal);
      const f = report.failover;
      return {
        output:
          `failover ${f.oldWriter} -> ${f.newWriter}: promoted after ${f.promotedAfterMs} ms, read/write endpoint re-pointed after ${f.repointedAfterMs} ms\n` +
          `writes: ${report.acknowledged} acknowledged, ${report.missing.length} missing afterwards, ${report.failedAttempts} failed attempts retried; client-visible downtime ${report.downtimeMs} ms`,
        failed: report.missing.length > 0,
      };
    }
    case 'topology': {
      const topology = loadTopology(parsed.values.get('--from')!, terraformDir(parsed));
      return { output: parsed.flags.has('--json') ? JSON.stringify(topology, null, 2) : formatTopology(topology), failed: false };
    }
  }
}

/** Exit code 2 for what the user can fix before anything starts (an AssemblyInputError covers the topology's TopologyInputError). */
export function isUsageProblem(err: unknown): boolean {
  return err instanceof UsageError || err instanceof RehearsalConfigError || err instanceof MissingBinaryError || err instanceof AddressInUseError || err instanceof RehearsalStateError || err instanceof AssemblyInputError;
}

/**
 * `drill` on a PgBouncer engine deployment: the writer failover through the first host's listeners, with a
 * consumer's login of read/write access. Fails on an acknowledged write lost, or a read a writer served
 * through the read-only listener.
 */
async function fleetDrill(rehearsal: Rehearsal, fleet: DeploymentFleet): Promise<{ output: string; failed: boolean }> {
  const deployment = rehearsal.rehearsed.deployment!;
  const writer = deployment.consumers.find((c) => c.role === EndpointRole.READ_WRITE);
  const login = writer === undefined ? undefined : rehearsal.consumerLogin(writer.user);
  if (writer === undefined || login === undefined) throw new RehearsalConfigError([`--from ${deployment.from}: the drill writes as a READ_WRITE consumer, and the deployment has none`]);
  const host = fleet.hosts[0]!;
  const f = await poolerFailoverDrill(rehearsal, host, { username: writer.user, password: login }, fleet.spec);
  return {
    output: [
      `failover through ${host.name} (${host.host}), promoted ${f.promoted}: writes stood still ${f.writeDowntimeMs} ms; ${f.acknowledgedWrites} acknowledged, ${f.acknowledgedWritesLost} lost, ${f.writeErrors} errors retried`,
      `reads through the read-only listener: ${f.reads}, ${f.readsFromWriter} served by the writer, ${f.readErrors} errors; read-only pools re-pointed after ${f.repointedAfterMs ?? 'more than 20,000'} ms`,
    ].join('\n'),
    failed: f.acknowledgedWritesLost > 0 || f.readsFromWriter > 0,
  };
}
