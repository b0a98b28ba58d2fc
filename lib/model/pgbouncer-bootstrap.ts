/**
 * The PgBouncer engine's host bootstrap: the user data every pooler host runs at first boot. It is one
 * fixed text for every fleet and both flavours: what varies (endpoints, secrets, hosts, vCPUs, pool
 * settings) are `${Name}` placeholders (BOOTSTRAP_PLACEHOLDERS), which CloudFormation's Fn::Sub and
 * Terraform's templatefile both substitute, so Terraform needs no Node.js to use it and CDK and
 * Terraform deploy the same bytes. The script never writes "${" or "%{" itself (a test holds it to that),
 * so neither flavour reads anything else as a reference or a directive.
 *
 * The script lays the fleet out at boot with shell arithmetic (pool shares, processes per reader,
 * keepalives) and the model's templates (pgbouncer-fleet.ts); the model's own rendering
 * (renderFleetFiles) is the reference it is tested against, file for file, on several fleets.
 *
 * Steps, each a function, in order:
 *   install   the PgBouncer packages and the RDS CA bundle from the S3 asset, checked against SHA256SUMS
 *   configure the host agent, the fleet's ini files, the auth file and TLS files from Secrets Manager
 *   start     a systemd template unit per process, and a timer that re-reads the secrets (rotation)
 * The rehearsal runs the same text with APK_ROOT (a directory standing in for /), APK_AWS_STANDIN
 * (files standing in for Secrets Manager and S3) and APK_SKIP="install start" (it supervises the
 * processes itself), so a defect in what the hosts are told to write fails its tests.
 */
import { gzipSync } from 'node:zlib';
import { HOST_AGENT_PATH, HOST_AGENT_SOURCE } from './pgbouncer-host-agent';
import { COMMON_TEMPLATE_TOKENS, FLEET_PATHS, FLEET_PORTS, KEEPALIVE_MAX_IDLE_SECONDS, PROCESS_TEMPLATE_TOKENS, renderFleetCommonTemplate, renderFleetProcessTemplate } from './pgbouncer-fleet';

/** Every placeholder of the bootstrap, each a deploy-time value. */
export const BOOTSTRAP_PLACEHOLDERS = {
  /** The cluster (writer) endpoint's DNS name: the read/write pools follow it through a failover. */
  clusterEndpoint: '${ClusterEndpoint}',
  /** Each reader instance's endpoint, separated by spaces: a pool group per reader. */
  readerEndpoints: '${ReaderEndpoints}',
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
  /** The S3 object holding the Debian packages, SHA256SUMS and the RDS CA bundle. */
  packagesBucket: '${PackagesBucket}',
  packagesKey: '${PackagesKey}',
  /** The read-only listener's server role's secret: {"username", "password"}. */
  serverSecretArn: '${ServerSecretArn}',
  /** The consumers' secrets, separated by spaces: {"username", "password"} each. */
  consumerSecretArns: '${ConsumerSecretArns}',
  /** The listeners' certificate: {"certificate", "privateKey", "ca"}. */
  tlsSecretArn: '${TlsSecretArn}',
} as const;

/** The OS user the PgBouncer processes run as. */
export const FLEET_OS_USER = 'pgbouncer';
/** How often a host re-reads the secrets and reloads PgBouncer (rotation). */
export const AUTH_REFRESH_MINUTES = 5;
/** The names of the processes the bootstrap laid out, space-separated (the start step and the rehearsal read it). */
export const FLEET_PROCESS_LIST = `${FLEET_PATHS.dir}/processes`;

/**
 * EC2 user data is limited to 16 KB in raw form, before base64 (EC2 User Guide, user-data.html: "User
 * data is limited to 16 KB, in raw form, before it is base64-encoded").
 */
export const USER_DATA_MAX_BYTES = 16 * 1024;

/** The longest value each placeholder is allowed for: RDS endpoint names, realistic ARNs, S3 names; lists at their limit. */
const PLACEHOLDER_MAX_BYTES: Readonly<Record<string, number>> = {
  ClusterEndpoint: 128,
  // 15 readers (Aurora's limit), each name up to 128 bytes, and a space between.
  ReaderEndpoints: 15 * 129,
  DatabaseName: 63,
  ServerPort: 5,
  ServerUser: 63,
  PackagesBucket: 63,
  PackagesKey: 256,
  ServerSecretArn: 128,
  TlsSecretArn: 128,
};
/** Consumer secrets the user data has room for (an ARN is about 90 bytes; 128 allowed each). */
export const BOOTSTRAP_MAX_CONSUMER_SECRETS = 15;
/** The secrets' ARNs as the host keeps them for the refresh timer: the server role's, then the consumers'. */
export const FLEET_SECRET_ARNS = `${'etc/pgbouncer'}/secret-arns`;

/** The bootstrap's size with every placeholder at its longest. */
export function worstCaseUserDataBytes(template: string): number {
  let bytes = Buffer.byteLength(template);
  for (const match of template.matchAll(/\$\{([A-Za-z0-9]+)\}/g)) {
    const name = match[1]!;
    const longest = name === 'ConsumerSecretArns' ? BOOTSTRAP_MAX_CONSUMER_SECRETS * 129 : (PLACEHOLDER_MAX_BYTES[name] ?? 10);
    bytes += longest - match[0].length;
  }
  return bytes;
}

/** A file written through write_file: content in a quoted heredoc (no shell expansion), root marker replaced. */
function heredoc(relativePath: string, mode: string, content: string): string {
  if (content.includes('\nAPK_EOF\n')) throw new Error(`${relativePath} contains the heredoc delimiter`);
  return `write_file ${relativePath} ${mode} <<'APK_EOF'\n${content.endsWith('\n') ? content : `${content}\n`}APK_EOF`;
}

/**
 * The script without its comment lines (they stay here, in the generator; user data is limited to
 * 16 KB): lines of the script itself whose first non-blank character is '#', except the first two
 * (the shebang and the do-not-edit line). Heredoc bodies are left as they are.
 */
function withoutComments(script: string): string {
  let inHeredoc = false;
  return script
    .split('\n')
    .filter((line, i) => {
      if (inHeredoc) {
        if (line === 'APK_EOF') inHeredoc = false;
        return true;
      }
      if (line.includes("<<'APK_EOF'")) inHeredoc = true;
      return i < 2 || !/^\s*#/.test(line);
    })
    .join('\n');
}

/** gzip -9 + base64 in 76-column lines (what `base64 --decode` reads). */
function compressed(text: string): string {
  return (gzipSync(Buffer.from(text), { level: 9 }).toString('base64').match(/.{1,76}/g) ?? []).join('\n');
}

const PROCESS_UNIT = `[Unit]
Description=PgBouncer %i of the aurora-proxy-kit PgBouncer engine
After=network-online.target
Wants=network-online.target

[Service]
Type=notify
User=${FLEET_OS_USER}
ExecStart=/usr/sbin/pgbouncer /${FLEET_PATHS.dir}/%i.ini
ExecReload=/bin/kill -HUP $MAINPID
RuntimeDirectory=pgbouncer/%i
RuntimeDirectoryMode=0700
Restart=always
RestartSec=1
LimitNOFILE=65536

[Install]
WantedBy=multi-user.target
`;

const REFRESH_SERVICE = `[Unit]
Description=Re-read the aurora-proxy-kit PgBouncer engine's secrets and reload PgBouncer

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/apk-refresh-auth
`;

const REFRESH_TIMER = `[Unit]
Description=Re-read the PgBouncer engine's secrets every ${AUTH_REFRESH_MINUTES} minutes

[Timer]
OnBootSec=${AUTH_REFRESH_MINUTES}min
OnUnitActiveSec=${AUTH_REFRESH_MINUTES}min

[Install]
WantedBy=timers.target
`;

/** The bootstrap's template text: the same for every fleet. */
export function renderPoolerBootstrap(): string {
  const p = BOOTSTRAP_PLACEHOLDERS;
  const t = PROCESS_TEMPLATE_TOKENS;
  const c = COMMON_TEMPLATE_TOKENS;
  const refreshAuth = `#!/bin/bash\nset -euo pipefail\nexport APK_FILE_OWNER=$(id -u ${FLEET_OS_USER}):$(id -g ${FLEET_OS_USER})\nread -r server consumers </${FLEET_SECRET_ARNS}\n${HOST_AGENT_PATH} auth-file /${FLEET_PATHS.authFile} "$server" "$consumers"\nsystemctl reload 'apk-pgbouncer@*'\n`;
  const text = `#!/bin/bash
# aurora-proxy-kit PgBouncer engine host bootstrap, rendered by lib/model/pgbouncer-bootstrap.ts; do not edit.
set -euo pipefail
umask 022
# The rehearsal's stand-ins (unset on a host): a directory for /, files for AWS, steps it does itself.
ROOT=$(printenv APK_ROOT || true)
SKIP=" $(printenv APK_SKIP || true) "

# The fleet, substituted at deploy time.
CLUSTER_ENDPOINT="${p.clusterEndpoint}"
READER_ENDPOINTS="${p.readerEndpoints}"
HOSTS=${p.hosts}
VCPUS=${p.vcpus}
MAX_CONNECTIONS=${p.maxConnections}
MAX_CONNECTIONS_PERCENT=${p.maxConnectionsPercent}
MAX_IDLE_PERCENT=${p.maxIdleConnectionsPercent}
BORROW_TIMEOUT=${p.borrowTimeoutSeconds}
MAX_CLIENT_CONNECTIONS=${p.maxClientConnections}
TCP_IDLE_TIMEOUT=${p.tcpIdleTimeoutSeconds}

skipped() { case "$SKIP" in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# write_file <path below the root> <mode>, content on stdin; @APK_ROOT@ in it becomes the root.
write_file() {
  local path="$ROOT/$1"
  mkdir -p "$(dirname "$path")"
  sed "s#@APK_ROOT@#$ROOT#g" >"$path.tmp"
  chmod "$2" "$path.tmp"
  mv "$path.tmp" "$path"
}

# uid:gid the private files belong to: the PgBouncer user on a host, the rehearsal's server user there.
file_owner() {
  if [ -n "$ROOT" ]; then printenv APK_FILE_OWNER || echo "$(id -u):$(id -g)"; else echo "$(id -u ${FLEET_OS_USER}):$(id -g ${FLEET_OS_USER})"; fi
}

# The host agent (lib/model/pgbouncer-host-agent.ts), gzip + base64: user data is limited to 16 KB.
write_agent() {
  mkdir -p "$ROOT/usr/local/sbin"
  base64 --decode <<'APK_EOF' | gunzip >"$ROOT${HOST_AGENT_PATH}"
${compressed(HOST_AGENT_SOURCE)}
APK_EOF
  chmod 0755 "$ROOT${HOST_AGENT_PATH}"
}

install_packages() {
  skipped install && return 0
  local dir=/var/tmp/apk-packages
  mkdir -p "$dir"
  ${HOST_AGENT_PATH} s3-get "${p.packagesBucket}" "${p.packagesKey}" "$dir/packages.tar"
  tar -xf "$dir/packages.tar" -C "$dir"
  (cd "$dir" && sha256sum --check --strict SHA256SUMS)
  DEBIAN_FRONTEND=noninteractive dpkg --install "$dir"/*.deb
  # Debian's single-instance unit: the kit runs one unit per process instead.
  systemctl disable --now pgbouncer.service || true
  id ${FLEET_OS_USER} >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin ${FLEET_OS_USER}
  install -D -m 0644 "$dir/rds-ca-bundle.pem" "/${FLEET_PATHS.rdsCaBundle}"
}

# process_ini <listener> <name> <target> <server host> <peer id> <pool size> <min pool size>:
# the listener's template (renderFleetProcessTemplate) with the process's values.
process_ini() {
  sed -e "s#${t.name}#$2#g" -e "s#${t.target}#$3#g" -e "s#${t.serverHost}#$4#g" -e "s#${t.peerId}#$5#g" -e "s#${t.poolSize}#$6#g" -e "s#${t.minPoolSize}#$7#g" "$ROOT/${FLEET_PATHS.dir}/templates/$1.ini.in" | write_file "${FLEET_PATHS.dir}/$2.ini" 0644
}

# The fleet's layout (lib/model/pgbouncer-fleet.ts planFleetProcesses, in shell arithmetic): a target's
# budget is poolSizing() of max_connections, split evenly over every process of the fleet that pools for it.
lay_out_processes() {
  local budget idle pool min peer peers reader host readers per_reader names=""
  budget=$(( MAX_CONNECTIONS * MAX_CONNECTIONS_PERCENT / 100 ))
  idle=$(( MAX_CONNECTIONS * MAX_IDLE_PERCENT / 100 ))
  if [ "$idle" -gt "$budget" ]; then idle=$budget; fi
  # Read/write: one process per vCPU, pooling for the writer through the cluster endpoint.
  pool=$(( budget / (HOSTS * VCPUS) ))
  min=$(( idle / (HOSTS * VCPUS) ))
  peers="[peers]"
  for peer in $(seq 1 "$VCPUS"); do
    process_ini rw "rw-$peer" writer "$CLUSTER_ENDPOINT" "$peer" "$pool" "$min"
    peers="$peers
$peer = host=$ROOT/${FLEET_PATHS.runDir}/rw-$peer port=${FLEET_PORTS.readWrite}"
    names="$names rw-$peer"
  done
  printf '%s\\n' "$peers" | write_file ${FLEET_PATHS.dir}/rw-peers.ini 0644
  # Read-only: for each reader, max(1, vCPUs / readers) processes pooling for that reader alone.
  readers=$(echo "$READER_ENDPOINTS" | wc -w)
  per_reader=$(( VCPUS / readers ))
  if [ "$per_reader" -lt 1 ]; then per_reader=1; fi
  pool=$(( budget / (HOSTS * per_reader) ))
  min=$(( idle / (HOSTS * per_reader) ))
  peers="[peers]"
  peer=0
  reader=0
  for host in $READER_ENDPOINTS; do
    reader=$(( reader + 1 ))
    for _ in $(seq 1 "$per_reader"); do
      peer=$(( peer + 1 ))
      process_ini ro "ro-$peer" "reader$reader" "$host" "$peer" "$pool" "$min"
      peers="$peers
$peer = host=$ROOT/${FLEET_PATHS.runDir}/ro-$peer port=${FLEET_PORTS.readOnly}"
      names="$names ro-$peer"
    done
  done
  printf '%s\\n' "$peers" | write_file ${FLEET_PATHS.dir}/ro-peers.ini 0644
  echo "$names" | write_file ${FLEET_PROCESS_LIST} 0644
}

configure() {
${heredoc(`${FLEET_PATHS.dir}/templates/common.ini.in`, '0644', renderFleetCommonTemplate())}
${heredoc(`${FLEET_PATHS.dir}/templates/rw.ini.in`, '0644', renderFleetProcessTemplate('readWrite'))}
${heredoc(`${FLEET_PATHS.dir}/templates/ro.ini.in`, '0644', renderFleetProcessTemplate('readOnly'))}
  # Keepalives below the NLB's idle timeout (fleetKeepalive): probe a quiet client before the NLB forgets it.
  local keepidle
  keepidle=$(( TCP_IDLE_TIMEOUT / 2 ))
  if [ "$keepidle" -gt ${KEEPALIVE_MAX_IDLE_SECONDS} ]; then keepidle=${KEEPALIVE_MAX_IDLE_SECONDS}; fi
  sed -e "s#${c.maxClientConnections}#$MAX_CLIENT_CONNECTIONS#g" -e "s#${c.borrowTimeoutSeconds}#$BORROW_TIMEOUT#g" -e "s#${c.keepIdleSeconds}#$keepidle#g" -e "s#${c.clientIdleTimeoutSeconds}#$TCP_IDLE_TIMEOUT#g" \\
    "$ROOT/${FLEET_PATHS.dir}/templates/common.ini.in" | write_file ${FLEET_PATHS.commonIni} 0644
  lay_out_processes
  mkdir -p "$ROOT/${FLEET_PATHS.dir}/tls"
  APK_FILE_OWNER=$(file_owner) "$ROOT${HOST_AGENT_PATH}" tls "${p.tlsSecretArn}" "$ROOT/${FLEET_PATHS.dir}/tls"
  # Once in the user data (the 16 KB limit); the refresh timer reads them from this file.
  echo "${p.serverSecretArn} ${p.consumerSecretArns}" | write_file ${FLEET_SECRET_ARNS} 0600
  local server consumers
  read -r server consumers <"$ROOT/${FLEET_SECRET_ARNS}"
  APK_FILE_OWNER=$(file_owner) "$ROOT${HOST_AGENT_PATH}" auth-file "$ROOT/${FLEET_PATHS.authFile}" "$server" "$consumers"
}

start_processes() {
  skipped start && return 0
${heredoc('etc/systemd/system/apk-pgbouncer@.service', '0644', PROCESS_UNIT)}
${heredoc('usr/local/sbin/apk-refresh-auth', '0755', refreshAuth)}
${heredoc('etc/systemd/system/apk-refresh-auth.service', '0644', REFRESH_SERVICE)}
${heredoc('etc/systemd/system/apk-refresh-auth.timer', '0644', REFRESH_TIMER)}
  systemctl daemon-reload
  for name in $(cat "/${FLEET_PROCESS_LIST}"); do systemctl enable --now "apk-pgbouncer@$name.service"; done
  systemctl enable --now apk-refresh-auth.timer
}

write_agent
install_packages
configure
start_processes
`;
  const rendered = withoutComments(text);
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
