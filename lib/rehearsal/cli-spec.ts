/**
 * The `rehearse` commands and their options: what cli.ts parses and what `--help` prints.
 */
import { optionsFor, type CliCommand, type CliOption } from '../cli/spec';
import { DEFAULT_POOL_SETTINGS } from '../model/sizing';
import { POSTGRES_PORT } from '../model/vocabulary';
import { DEFAULT_CORES_PER_VCPU } from './cgroups';
import {
  DEFAULT_ADDRESS_BLOCK,
  DEFAULT_MAX_CLIENT_CONNECTIONS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_POOLER_PROCESSES,
  DEFAULT_REPLICAS,
  DEFAULT_WORK_DIR,
  REHEARSAL_NETWORKS,
  REHEARSAL_POOLER_VCPUS,
} from './settings';

export const REHEARSE_COMMANDS = ['up', 'status', 'outputs', 'down', 'drill', 'topology'] as const;
export type RehearseCommand = (typeof REHEARSE_COMMANDS)[number];

const ATTACHED: RehearseCommand[] = ['up', 'status', 'outputs', 'down', 'drill'];
const FROM_HINT = 'a cdk.out directory (or its manifest.json), or a plan\'s JSON (terraform show -json <planfile> > plan.json)';

export const REHEARSE_OPTIONS: ReadonlyArray<CliOption> = [
  { name: '--from', value: 'PATH', description: `rehearse what would be deployed: ${FROM_HINT}`, commands: ['up', 'topology'] },
  { name: '--work-dir', value: 'DIR', default: DEFAULT_WORK_DIR, description: 'directory the rehearsal owns: data, configs, logs, state', commands: ATTACHED },
  { name: '--terraform-dir', value: 'DIR', default: 'the plan JSON\'s directory', description: 'with --from a plan: the root module\'s directory the plan was made in (its .terraform, or TF_DATA_DIR, locates the modules)', commands: ['up', 'topology'] },
  { name: '--replicas', value: 'N', default: String(DEFAULT_REPLICAS), description: 'streaming replicas behind the read-only endpoint', commands: ['up'] },
  { name: '--async', description: 'asynchronous replication (default: synchronous, a quorum of one replica, as Aurora acknowledges)', commands: ['up'] },
  { name: '--address-block', value: 'A.B.C', default: DEFAULT_ADDRESS_BLOCK, description: 'first three octets of the loopback block (127.0.<b> or 127.1.<b>); rehearsals on different blocks run side by side', commands: ['up'] },
  { name: '--port', value: 'PORT', default: String(POSTGRES_PORT), description: 'port every server listens on, each on its own address', commands: ['up'] },
  { name: '--max-connections', value: 'N', default: String(DEFAULT_MAX_CONNECTIONS), description: 'max_connections of every instance; the pools leave the kit\'s reserve of it to others, as on Aurora', commands: ['up'] },
  { name: '--sizing-max-connections', value: 'N', default: 'the --max-connections value', description: 'max_connections the pools are sized against', commands: ['up'] },
  { name: '--max-connections-percent', value: 'P', default: String(DEFAULT_POOL_SETTINGS.maxConnectionsPercent), description: 'RDS Proxy MaxConnectionsPercent the pools are sized from', commands: ['up'] },
  { name: '--max-idle-connections-percent', value: 'P', default: `${DEFAULT_POOL_SETTINGS.maxIdleConnectionsPercent}, at most --max-connections-percent`, description: 'RDS Proxy MaxIdleConnectionsPercent', commands: ['up'] },
  { name: '--borrow-timeout', value: 'S', default: String(DEFAULT_POOL_SETTINGS.connectionBorrowTimeoutSeconds), description: 'RDS Proxy ConnectionBorrowTimeout in seconds', commands: ['up'] },
  { name: '--max-client-connections', value: 'N', default: String(DEFAULT_MAX_CLIENT_CONNECTIONS), description: 'client connections each PgBouncer process accepts', commands: ['up'] },
  { name: '--pooler-processes', value: 'N', default: String(DEFAULT_POOLER_PROCESSES), description: 'PgBouncer processes per pool target, on one address (like RDS Proxy\'s hosts)', commands: ['up'] },
  { name: '--network', value: REHEARSAL_NETWORKS.join('|'), default: 'loopback; namespaces with --from', description: 'where the servers listen: loopback addresses, or network namespaces shaped like the VPCs (as root)', commands: ['up'] },
  { name: '--cores-per-vcpu', value: 'C', default: `0 = no CPU budgets; ${DEFAULT_CORES_PER_VCPU} with --from`, description: 'cores of this machine per vCPU of an instance\'s class (each instance\'s CPU budget)', commands: ['up'] },
  { name: '--pooler-vcpus', value: 'N', default: String(REHEARSAL_POOLER_VCPUS), description: 'vCPUs of the pooler host, under CPU budgets', commands: ['up'] },
  { name: '--fsync', description: 'fsync on the instances (default: off, the data is throwaway)', commands: ['up'] },
  { name: '--no-comparison-proxies', description: 'skip the comparison proxies, HAProxy and pgpool-II (default: started)', commands: ['up'] },
  { name: '--no-peers', description: 'deprecated: --no-comparison-proxies', commands: ['up'] },
  { name: '--json', description: 'print JSON (outputs: always JSON)', commands: ['status', 'outputs', 'topology'] },
];

/** Per subcommand: a line for `rehearse --help`, then what its own help says. */
const SUMMARIES: Record<RehearseCommand, readonly [string, string]> = {
  up: ['start the local rehearsal', 'a PostgreSQL writer and streaming replicas, PgBouncer read/write and read-only endpoints, the HAProxy and pgpool-II comparison proxies, a supervised health checker. Progress goes to stderr, the status to stdout.'],
  status: ['the running rehearsal\'s status', 'its endpoints, processes, replication, PgBouncer pools and health checker; --json adds `aws`, the AWS-shaped names and namespaces to connect by (null on loopback).'],
  outputs: ['the endpoints as JSON', 'like `terraform output -json`: read_write and read_only, each with host, port, database, user, password, ca_file; with network namespaces, `aws`: the Region, the cluster\'s and the proxy\'s AWS-shaped endpoints and each proxy endpoint\'s name, role, VPC, namespace, host and port (the deployment\'s after `up --from`; null on loopback).'],
  down: ['stop the rehearsal', 'every process by pid, checking nothing is left. Idempotent: "nothing to stop" when nothing runs there.'],
  drill: ['writer failover drill', 'kill the writer, promote a replica, re-point the read/write endpoint, count acknowledged writes lost.'],
  topology: ['what `up --from` would rehearse', 'the deployment\'s instances, endpoints and consumers, and the settings they imply; nothing is started.'],
};

const NOTES: Partial<Record<RehearseCommand, string[]>> = {
  up: [
    'With --from, the deployment fixes the replicas, the pool settings, the port, the endpoints and the consumers; options given too apply on top. What cannot run locally (IAM tokens, KMS, CloudWatch) is listed with its stand-in.',
    'Needs PostgreSQL 15, PgBouncer 1.25.2 (`make pgbouncer`), and for the comparison proxies HAProxy and pgpool-II (`make deps`). Run as root for namespaces and CPU budgets; without root it falls back to loopback and says so.',
  ],
  drill: ['Exit code 1 also when an acknowledged write is missing after the failover.'],
};

/** A subcommand's help: its summary, its options (from REHEARSE_OPTIONS) and the exit codes. */
export function rehearseCommand(command: RehearseCommand): CliCommand {
  return {
    name: `rehearse ${command}`,
    summary: `${SUMMARIES[command][0][0]!.toUpperCase()}${SUMMARIES[command][0].slice(1)}: ${SUMMARIES[command][1]}`,
    options: optionsFor(REHEARSE_OPTIONS, command),
    ...(NOTES[command] !== undefined ? { notes: NOTES[command] } : {}),
  };
}

/** One line per subcommand, for `rehearse --help`. */
export const REHEARSE_SUMMARIES: ReadonlyArray<readonly [RehearseCommand, string]> = REHEARSE_COMMANDS.map((c) => [c, SUMMARIES[c][0]]);
