/**
 * The PgBouncer engine's host bootstrap: the user data every pooler host runs at first boot. It is one
 * fixed text for every fleet and both flavours: what varies (endpoints, secrets, hosts, vCPUs, pool
 * settings) are `${Name}` placeholders (BOOTSTRAP_PLACEHOLDERS), which CloudFormation's Fn::Sub and
 * Terraform's templatefile both substitute, so Terraform needs no Node.js to use it and CDK and
 * Terraform deploy the same bytes. Nothing else in it is "${" or "%{" (a test holds it to that), so
 * neither flavour reads anything else as a reference or a directive.
 *
 * The user data's first lines export each placeholder's value as a shell variable (placeholderVariable);
 * then a tar of the bootstrap's files (bootstrapFiles: host/bootstrap.sh, the AWS calls it needs before the
 * agent is installed, the units, and what the model renders for the host: kit.json, kit.env, the fleet's
 * templates and the agent's pinned SHA-256), gzip + base64, is unpacked and bootstrap.sh runs. Compressed,
 * as plain they would not fit EC2's 16 KB beside the placeholders at their longest.
 *
 * What the bootstrap does, step by step, is in host/bootstrap.sh. Nothing in it is for tests: the rehearsal
 * boots a Debian 13 host and runs this user data as it is, every step.
 */
import { gzipSync } from 'node:zlib';
import { FLEET_LISTENER_SHORT, FLEET_LISTENERS, fleetListenerPoolMode, fleetListenerRole } from './pgbouncer-fleet';
import { hostFile } from './pgbouncer-host-files';
import { HOST_AGENT_PACKAGE_FILE, HOST_FETCH_FILE, hostAgentSha256 } from './pgbouncer-host-agent';
import { renderHostKitEnv, renderHostKitJson, renderHostTemplates } from './pgbouncer-host-kit';
import { HOST_UNIT_FILES, REFRESH_SCRIPT_NAME } from './pgbouncer-host-units';
import { PoolMode } from './pgbouncer-ini';
import { MAX_POOLER_CONSUMER_USERS, PACKAGES_KEY_MAX_LENGTH } from './rules/pgbouncer-proxy';
import { EndpointRole } from './vocabulary';

/** Every placeholder of the bootstrap, each a deploy-time value. */
export const BOOTSTRAP_PLACEHOLDERS = {
  /** The cluster (writer) endpoint's DNS name: the read/write pools follow it through a failover. */
  clusterEndpoint: '${ClusterEndpoint}',
  /** Each reader instance's endpoint, separated by spaces: a pool group per reader. */
  readerEndpoints: '${ReaderEndpoints}',
  /** The writer instance's own endpoint: a promoted reader's pools pool for it after a failover (READ_ONLY_ROUTING). */
  writerInstanceEndpoint: '${WriterInstanceEndpoint}',
  databaseName: '${DatabaseName}',
  serverPort: '${ServerPort}',
  /** The read-only listener's server role (a role without write privileges). */
  serverUser: '${ServerUser}',
  /** Hosts in the fleet and vCPUs of each: they divide each target's budget. */
  hosts: '${Hosts}',
  vcpus: '${Vcpus}',
  /** max_connections of each instance and the pool settings, as RDS Proxy takes them. */
  maxConnections: '${MaxConnections}',
  maxConnectionsPercent: '${MaxConnectionsPercent}',
  maxIdleConnectionsPercent: '${MaxIdleConnectionsPercent}',
  borrowTimeoutSeconds: '${BorrowTimeoutSeconds}',
  maxClientConnections: '${MaxClientConnections}',
  /** The NLB listeners' TCP idle timeout: keepalives and the client idle timeout derive from it. */
  tcpIdleTimeoutSeconds: '${TcpIdleTimeoutSeconds}',
  /** The session listeners the fleet runs (sessionListenersValue): `sw` read/write, `sr` read-only, space-separated; empty for none. */
  sessionListeners: '${SessionListeners}',
  /** Share of a target's budget its session pools take, where its role has a session listener. */
  sessionMaxConnectionsPercent: '${SessionMaxConnectionsPercent}',
  /** The S3 object holding the Debian packages, SHA256SUMS and the RDS CA bundle. */
  packagesBucket: '${PackagesBucket}',
  packagesKey: '${PackagesKey}',
  /** The read-only listener's server role's secret: {"username", "password"}. */
  serverSecretArn: '${ServerSecretArn}',
  /** The consumers' secrets, separated by spaces: {"username", "password"} each. */
  consumerSecretArns: '${ConsumerSecretArns}',
  /** The listeners' certificate: {"certificate", "privateKey", "ca"}. */
  tlsSecretArn: '${TlsSecretArn}',
  /** The fleet's name: the Fleet dimension of its CloudWatch metrics (pgbouncer-metrics.ts). */
  fleetName: '${FleetName}',
  /**
   * Where the host signals CloudFormation (pgbouncer-rollout.ts): the stack's name, the Auto Scaling group's
   * logical id and the stack's Region. An empty stack name (Terraform) sends no signal.
   */
  signalStack: '${SignalStack}',
  signalResource: '${SignalResource}',
  signalRegion: '${SignalRegion}',
} as const;

/** Each placeholder's shell variable in the bootstrap's program: FleetName -> FLEET_NAME. */
export function placeholderVariable(placeholder: string): string {
  return placeholder.slice(2, -1).replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

export { AUTH_REFRESH_MINUTES, FLEET_OS_USER, FLEET_RESTART_SECONDS, FLEET_START_LIMIT, SERVE_UNIT_NAME } from './pgbouncer-host-units';
export { AMAZON_TIME_SYNC, FLEET_PROCESS_LIST } from './pgbouncer-host-kit';

/**
 * EC2 user data is limited to 16 KB in raw form, before base64 (EC2 User Guide, user-data.html: "User
 * data is limited to 16 KB, in raw form, before it is base64-encoded").
 */
export const USER_DATA_MAX_BYTES = 16 * 1024;

/**
 * The longest Aurora instance endpoint: <instance identifier, at most 63 characters>.<12-character cluster
 * hash>.<Region, at most 14>.rds.amazonaws.com.cn (Aurora User Guide, Aurora.Overview.Endpoints; RDS API,
 * CreateDBInstance DBInstanceIdentifier). The cluster endpoint adds "cluster-" before the hash.
 */
const INSTANCE_ENDPOINT_MAX_BYTES = 63 + 1 + 12 + 1 + 14 + '.rds.amazonaws.com.cn'.length;

/** The longest value each placeholder is allowed for: RDS endpoint names, realistic ARNs, S3 names; lists at their limit. */
const PLACEHOLDER_MAX_BYTES: Readonly<Record<string, number>> = {
  ClusterEndpoint: INSTANCE_ENDPOINT_MAX_BYTES + 'cluster-'.length,
  // 15 readers (Aurora's limit), each instance endpoint, and a space between.
  ReaderEndpoints: 15 * (INSTANCE_ENDPOINT_MAX_BYTES + 1),
  WriterInstanceEndpoint: INSTANCE_ENDPOINT_MAX_BYTES,
  DatabaseName: 63,
  ServerPort: 5,
  ServerUser: 63,
  PackagesBucket: 63,
  PackagesKey: PACKAGES_KEY_MAX_LENGTH,
  ServerSecretArn: 128,
  TlsSecretArn: 128,
  // CloudFormation's alarm dimensions take values of 1 to 255 characters (the fleet-name rule).
  FleetName: 255,
  // Stack names are at most 128 characters, logical ids 255 (CloudFormation User Guide, cloudformation-limits).
  SignalStack: 128,
  SignalResource: 255,
  SignalRegion: 14,
  SessionListeners: 5,
};

/** The SessionListeners value of a fleet whose endpoints use session pooling in `sessionRoles`: both flavours give this. */
export function sessionListenersValue(sessionRoles: ReadonlyArray<EndpointRole>): string {
  return FLEET_LISTENERS.filter((l) => fleetListenerPoolMode(l) === PoolMode.SESSION && sessionRoles.includes(fleetListenerRole(l))).map((l) => FLEET_LISTENER_SHORT[l]).join(' ');
}

/** The bootstrap's size with every placeholder at its longest. */
export function worstCaseUserDataBytes(template: string): number {
  let bytes = Buffer.byteLength(template);
  for (const match of template.matchAll(/\$\{([A-Za-z0-9]+)\}/g)) {
    const name = match[1]!;
    // Consumer secret ARNs: about 90 bytes each, 128 allowed, and a space between.
    const longest = name === 'ConsumerSecretArns' ? MAX_POOLER_CONSUMER_USERS * 129 : (PLACEHOLDER_MAX_BYTES[name] ?? 10);
    bytes += longest - match[0].length;
  }
  return bytes;
}

/** A file of the bootstrap's tar: its name in the tar, content, mode. */
export interface BootstrapFile {
  readonly name: string;
  readonly content: string;
  readonly mode: number;
}

/**
 * The bootstrap's files, as the user data carries them: the kit's host files as they are, and what the model
 * renders for the host. The agent comes in the packages object, pinned here by its SHA-256 (sha256sum's format).
 */
export function bootstrapFiles(): BootstrapFile[] {
  const file = (name: string, mode = 0o644): BootstrapFile => ({ name, content: /\.(sh|py)$/.test(name) ? withoutCommentLines(hostFile(name)) : hostFile(name), mode });
  return [
    file('bootstrap.sh', 0o755),
    file(HOST_FETCH_FILE, 0o755),
    file(REFRESH_SCRIPT_NAME, 0o755),
    ...HOST_UNIT_FILES.map((name) => file(name)),
    { name: 'kit.json', content: renderHostKitJson(), mode: 0o644 },
    { name: 'kit.env', content: renderHostKitEnv(), mode: 0o644 },
    { name: `${HOST_AGENT_PACKAGE_FILE}.sha256`, content: `${hostAgentSha256()}  ${HOST_AGENT_PACKAGE_FILE}\n`, mode: 0o644 },
    ...[...renderHostTemplates()].map(([name, content]) => ({ name: `templates/${name}`, content, mode: 0o644 })),
  ];
}

/**
 * A shell or Python file without its comment lines (they stay in host/; user data is limited to 16 KB): lines
 * whose first non-blank character is '#', but the first (the shebang). Neither file has such a line inside a
 * string or heredoc (test/model/pgbouncer-host-files.test.ts runs what is carried).
 */
export function withoutCommentLines(text: string): string {
  return text
    .split('\n')
    .filter((line, i) => i === 0 || !/^\s*#/.test(line))
    .join('\n');
}

/** One POSIX ustar header field: octal, NUL-terminated, zero-padded to its width. */
function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

/**
 * A POSIX ustar archive of `files` (regular files and their folders), owned by root and dated at the epoch, so
 * the same files give the same bytes: what GNU tar on the host (`tar -x`) reads. Names of at most 100 bytes.
 */
export function ustar(files: ReadonlyArray<BootstrapFile>): Buffer {
  const blocks: Buffer[] = [];
  const entry = (name: string, mode: number, type: '0' | '5', body: Buffer): void => {
    if (Buffer.byteLength(name) > 100) throw new Error(`${name}: a tar entry's name is at most 100 bytes here`);
    const header = Buffer.alloc(512);
    header.write(name, 0);
    header.write(octal(mode, 8), 100);
    header.write(octal(0, 8), 108);
    header.write(octal(0, 8), 116);
    header.write(octal(body.length, 12), 124);
    header.write(octal(0, 12), 136);
    header.write('        ', 148);
    header.write(type, 156);
    header.write('ustar\0' + '00', 257);
    header.write(octal([...header].reduce((sum, b) => sum + b, 0), 7), 148);
    blocks.push(header, body, Buffer.alloc((512 - (body.length % 512)) % 512));
  };
  const dirs = [...new Set(files.flatMap((f) => f.name.split('/').slice(0, -1).map((_, i, parts) => `${parts.slice(0, i + 1).join('/')}/`)))].sort();
  for (const dir of dirs) entry(dir, 0o755, '5', Buffer.alloc(0));
  for (const f of [...files].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))) entry(f.name, f.mode, '0', Buffer.from(f.content));
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

/** gzip -9 + base64 in lines of 1,000 (`base64 --decode` reads any length; fewer line breaks, fewer bytes). */
function compressed(data: Buffer): string {
  return (gzipSync(data, { level: 9 }).toString('base64').match(/.{1,1000}/g) ?? []).join('\n');
}

/**
 * The user data: one fixed text for every fleet. Its first lines export each placeholder's value (what
 * Fn::Sub and templatefile substitute), then the bootstrap's files, a tar, gzip + base64, are unpacked and
 * bootstrap.sh runs. EC2 user data is limited to 16 KB and the placeholders may take about 4.6 KB at their
 * longest (15 readers, 15 consumer secrets), so the files travel compressed.
 */
export function renderPoolerBootstrap(): string {
  const exported = Object.values(BOOTSTRAP_PLACEHOLDERS).map((p) => `export ${placeholderVariable(p)}="${p}"`);
  const rendered = `#!/bin/bash
# aurora-proxy-kit PgBouncer engine host bootstrap (host/), rendered by lib/model/pgbouncer-bootstrap.ts; do not edit.
set -euo pipefail
${exported.join('\n')}
dir=$(mktemp -d)
base64 --decode <<'APK_EOF' | tar -xz -C "$dir"
${compressed(ustar(bootstrapFiles()))}
APK_EOF
exec bash "$dir/bootstrap.sh"
`;
  if (/\$\{(?![A-Za-z0-9]+\})|%\{/.test(rendered)) throw new Error('the bootstrap holds "${" or "%{" other than its placeholders');
  const worst = worstCaseUserDataBytes(rendered);
  if (worst > USER_DATA_MAX_BYTES) throw new Error(`the PgBouncer engine's bootstrap is ${worst} bytes at its longest: EC2 user data is limited to ${USER_DATA_MAX_BYTES} bytes`);
  return rendered;
}

/**
 * What CloudFormation's Fn::Sub and Terraform's templatefile do with the template: every `${Name}`
 * replaced by its value; a placeholder without one is an error, as it is in both flavours.
 */
export function substitutePlaceholders(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\$\{([A-Za-z0-9]+)\}/g, (whole, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for ${whole} in the PgBouncer engine's user data`);
    return value;
  });
}
