/**
 * The PgBouncer engine's host bootstrap: the user data every pooler host runs at first boot. It is one
 * fixed text for every fleet and both flavours: what varies (endpoints, secrets, hosts, vCPUs, pool
 * settings) are `${Name}` placeholders (BOOTSTRAP_PLACEHOLDERS), which CloudFormation's Fn::Sub and
 * Terraform's templatefile both substitute, so Terraform needs no Node.js to use it and CDK and
 * Terraform deploy the same bytes. The script never writes "${" or "%{" itself (a test holds it to that),
 * so neither flavour reads anything else as a reference or a directive.
 *
 * The user data's first lines export each placeholder's value as a shell variable (placeholderVariable);
 * the program that configures the host (renderPoolerBootstrapProgram) follows gzip + base64: it holds no
 * placeholder, and plain it would not fit EC2's 16 KB beside the placeholders at their longest.
 *
 * The program lays the fleet out at boot with shell arithmetic (pool shares, processes per reader,
 * keepalives) and the model's templates (pgbouncer-fleet.ts); the model's own rendering
 * (renderFleetFiles) is the reference it is tested against, file for file, on several fleets.
 *
 * Steps, each a function, in order:
 *   install   the packages (PgBouncer's, AWS's SSM Agent, whose postinst enables and starts it), the host
 *             agent (its SHA-256 pinned here) and the RDS CA bundle from the S3 asset, checked against
 *             SHA256SUMS, fetched by the one program the user data carries (apk-fetch)
 *   configure the host agent, the fleet's ini files, the auth file and TLS files from Secrets Manager
 *   start     a systemd template unit per process, the host agent's `serve` unit (health endpoint,
 *             metrics exporter), and a timer that re-reads the secrets (rotation)
 * The rehearsal runs the same text with APK_ROOT (a directory standing in for /), APK_AWS_STANDIN
 * (files standing in for Secrets Manager and S3) and APK_SKIP="install start" (it supervises the
 * processes itself), so a defect in what the hosts are told to write fails its tests.
 */
import { gzipSync } from 'node:zlib';
import { HOST_AGENT_PACKAGE_FILE, HOST_AGENT_PATH, HOST_FETCH_PATH, HOST_FETCH_SOURCE, hostAgentSha256 } from './pgbouncer-host-agent';
import { COMMON_TEMPLATE_TOKENS, FLEET_LISTENER_SHORT, FLEET_LISTENERS, FLEET_PATHS, FLEET_PLACEHOLDERS, FLEET_PORTS, fleetListenerPoolMode, fleetListenerRole, KEEPALIVE_MAX_IDLE_SECONDS, PROCESS_TEMPLATE_TOKENS, renderFleetCommonTemplate, renderFleetProcessTemplate, renderFleetRouteTemplate, type FleetListener } from './pgbouncer-fleet';
import { PoolMode } from './pgbouncer-ini';
import { EndpointRole } from './vocabulary';
import { FLEET_NAME_FILE, POOLER_HEALTH_PATHS, POOLER_HEALTH_PORT } from './pgbouncer-host-serve';
import { MAX_POOLER_CONSUMER_USERS, PACKAGES_KEY_MAX_LENGTH } from './rules/pgbouncer-proxy';
import { FLEET_OS_USER, PROCESS_UNIT, REFRESH_SERVICE, REFRESH_TIMER, SERVE_UNIT, SERVE_UNIT_NAME } from './pgbouncer-host-units';
import { FLEET_HOST_SERVE_WAIT_SECONDS } from './pgbouncer-rollout';
import { RESERVED_CONNECTIONS } from './sizing';

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
/** The names of the processes the bootstrap laid out, space-separated (the start step and the rehearsal read it). */
export const FLEET_PROCESS_LIST = `${FLEET_PATHS.dir}/processes`;

/**
 * EC2 user data is limited to 16 KB in raw form, before base64 (EC2 User Guide, user-data.html: "User
 * data is limited to 16 KB, in raw form, before it is base64-encoded").
 */
export const USER_DATA_MAX_BYTES = 16 * 1024;
/** The Amazon Time Sync Service's address in every VPC (EC2 User Guide, configure-ec2-ntp.html). */
export const AMAZON_TIME_SYNC = '169.254.169.123';

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
/** The secrets' ARNs as the host keeps them for the refresh timer: the server role's, then the consumers'. */
export const FLEET_SECRET_ARNS = `${'etc/pgbouncer'}/secret-arns`;

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

/** gzip -9 + base64 in lines of 1,000 (`base64 --decode` reads any length; fewer line breaks, fewer bytes). */
function compressed(text: string): string {
  return (gzipSync(Buffer.from(text), { level: 9 }).toString('base64').match(/.{1,1000}/g) ?? []).join('\n');
}

/**
 * Python without its comment lines and its functions' one-line docstrings (they stay in the generator):
 * the shebang and the module's docstring (its do-not-edit line) are kept.
 */
function pythonWithoutComments(source: string): string {
  return source
    .split('\n')
    .filter((line, i) => i === 0 || !(/^\s*#/.test(line) || /^\s+"""[^"]*"""$/.test(line)))
    .join('\n');
}

/** The tokens the program's process template carries for the deploy-time values process_ini fills in. */
const DEPLOY_TOKENS = [
  [FLEET_PLACEHOLDERS.databaseName, '@DATABASE@', 'DATABASE_NAME'],
  [FLEET_PLACEHOLDERS.serverPort, '@SERVER_PORT@', 'SERVER_PORT'],
  [FLEET_PLACEHOLDERS.serverUser, '@SERVER_USER@', 'SERVER_USER'],
  [FLEET_PLACEHOLDERS.clusterEndpoint, '@CLUSTER@', 'CLUSTER_ENDPOINT'],
  [FLEET_PLACEHOLDERS.writerInstanceEndpoint, '@SPARE@', 'WRITER_INSTANCE_ENDPOINT'],
] as const;

function deployTokens(template: string): string {
  return DEPLOY_TOKENS.reduce((text, [placeholder, token]) => text.replaceAll(placeholder, token), template);
}

/**
 * The bootstrap's program: the script that configures a host, reading the fleet's values from the
 * environment the user data's first lines export (placeholderVariable of each placeholder). It holds
 * no placeholder, so it travels compressed (renderPoolerBootstrap).
 */
export function renderPoolerBootstrapProgram(): string {
  const t = PROCESS_TEMPLATE_TOKENS;
  const c = COMMON_TEMPLATE_TOKENS;
  const deploy = DEPLOY_TOKENS.map(([, token, variable]) => `-e "s#${token}#$${variable}#g"`).join(' ');
  const refreshAuth = `#!/bin/bash\nset -euo pipefail\nexport APK_FILE_OWNER=$(id -u ${FLEET_OS_USER}):$(id -g ${FLEET_OS_USER})\nread -r server consumers </${FLEET_SECRET_ARNS}\n${HOST_AGENT_PATH} auth-file /${FLEET_PATHS.authFile} "$server" "$consumers"\nsystemctl reload 'apk-pgbouncer@*'\n`;
  const text = `#!/bin/bash
# aurora-proxy-kit PgBouncer engine host bootstrap program, rendered by lib/model/pgbouncer-bootstrap.ts; do not edit.
set -euo pipefail
umask 022
# The rehearsal's stand-ins (unset on a host): a directory for /, files for AWS, steps it does itself.
ROOT=$(printenv APK_ROOT || true)
SKIP=" $(printenv APK_SKIP || true) "
# A host whose bootstrap fails powers itself off: EC2's checks then find it not running and the group
# replaces it (the group does not use the load balancer's checks). Never on the rehearsal (a ROOT).
# CloudFormation hears of it first (FAILURE stops the rollout at this host); not signalled when its
# stack name is empty (Terraform) or the fetcher is not written yet.
on_exit() { local rc=$?; [ "$rc" -eq 0 ] || [ -n "$ROOT" ] || { logger -t apk-bootstrap "failed: $rc"; signal FAILURE || true; systemctl poweroff; }; }
trap on_exit EXIT

signal() { [ -z "$SIGNAL_STACK" ] || ${HOST_FETCH_PATH} signal "$SIGNAL_STACK" "$SIGNAL_RESOURCE" "$SIGNAL_REGION" "$1"; }

# The host counts once both listeners serve: the load balancer's health paths answer 200, then SUCCESS.
# Not serving within the wait fails the bootstrap (FAILURE, power off).
signal_serving() {
  skipped start && return 0
  ${HOST_FETCH_PATH} wait-serving ${FLEET_HOST_SERVE_WAIT_SECONDS} http://127.0.0.1:${POOLER_HEALTH_PORT}${POOLER_HEALTH_PATHS.readWrite} http://127.0.0.1:${POOLER_HEALTH_PORT}${POOLER_HEALTH_PATHS.readOnly}
  signal SUCCESS
}

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

# The packages fetcher (lib/model/pgbouncer-host-agent.ts); the agent comes in the packages object.
write_fetcher() {
${heredoc(HOST_FETCH_PATH.slice(1), '0755', pythonWithoutComments(HOST_FETCH_SOURCE))}
}

# Amazon Time Sync (in every VPC, the data VPC's only time source): SigV4 refuses a clock 5 minutes off.
# Debian's images run chrony or systemd-timesyncd; each gets the server, the other's file is inert.
sync_clock() {
  skipped install && return 0
  local s=${AMAZON_TIME_SYNC}
  [ -d /etc/chrony ] && mkdir -p /etc/chrony/sources.d && echo "server $s prefer iburst" >/etc/chrony/sources.d/aws.sources && (chronyc reload sources || true)
  mkdir -p /etc/systemd/timesyncd.conf.d && printf '[Time]\\nNTP=%s\\n' $s >/etc/systemd/timesyncd.conf.d/aws.conf && (systemctl try-restart systemd-timesyncd || true)
}

install_packages() {
  skipped install && return 0
  local dir=/var/tmp/apk-packages
  mkdir -p "$dir"
  ${HOST_FETCH_PATH} "$PACKAGES_BUCKET" "$PACKAGES_KEY" "$dir/packages.tar"
  tar -xf "$dir/packages.tar" -C "$dir"
  (cd "$dir" && sha256sum --check --strict SHA256SUMS)
  # This kit's agent only: an object built by another version stops the host here.
  (cd "$dir" && echo "${hostAgentSha256()}  ${HOST_AGENT_PACKAGE_FILE}" | sha256sum --check --strict)
  install -D -m 0755 "$dir/${HOST_AGENT_PACKAGE_FILE}" ${HOST_AGENT_PATH}
  DEBIAN_FRONTEND=noninteractive dpkg --install "$dir"/*.deb
  # Debian's single-instance unit: the kit runs one unit per process instead.
  systemctl disable --now pgbouncer.service || true
  id ${FLEET_OS_USER} >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin ${FLEET_OS_USER}
  install -D -m 0644 "$dir/rds-ca-bundle.pem" "/${FLEET_PATHS.rdsCaBundle}"
}

# process_ini <listener> <name> <target> <server host> <peer id> <pool size> <min pool size>:
# the listener's template (renderFleetProcessTemplate) with the process's values and the fleet's.
process_ini() {
  local out="${FLEET_PATHS.dir}/$2.ini"
  # A read-only process's pool is in its route file, the PgBouncer user's: the host agent re-points it.
  if [ "$1" = route ]; then out="${FLEET_PATHS.routesDir}/$2.ini"; fi
  sed -e "s#${t.name}#$2#g" -e "s#${t.target}#$3#g" -e "s#${t.serverHost}#$4#g" -e "s#${t.peerId}#$5#g" -e "s#${t.poolSize}#$6#g" -e "s#${t.minPoolSize}#$7#g" ${deploy} "$ROOT/${FLEET_PATHS.dir}/templates/$1.ini.in" | write_file "$out" 0644
  if [ "$1" = route ]; then chown "$(file_owner)" "$ROOT/$out"; fi
}

# lay_out <listener> <port> <pool budget> <idle floor> <processes per target> <targets...>: the listener's
# processes, as many per target (the cluster endpoint, or each reader's), its peers file and names.
lay_out() {
  local short=$1 port=$2 per=$5 pool idle min peer=0 n=0 host target peers="[peers]"
  idle=$4
  if [ "$idle" -gt "$3" ]; then idle=$3; fi
  pool=$(( $3 / (HOSTS * per) ))
  min=$(( idle / (HOSTS * per) ))
  shift 5
  for host in "$@"; do
    n=$(( n + 1 ))
    target="reader$n"
    case $short in ${FLEET_LISTENER_SHORT.readWrite}|${FLEET_LISTENER_SHORT.readWriteSession}) target=writer ;; esac
    for _ in $(seq 1 "$per"); do
      peer=$(( peer + 1 ))
      process_ini "$short" "$short-$peer" "$target" "$host" "$peer" "$pool" "$min"
      if [ "$target" != writer ]; then process_ini route "$short-$peer" "$target" "$host" "$peer" "$pool" "$min"; fi
      peers="$peers
$peer = host=$ROOT/${FLEET_PATHS.runDir}/$short-$peer port=$port"
      NAMES="$NAMES $short-$peer"
    done
  done
  printf '%s\\n' "$peers" | write_file "${FLEET_PATHS.dir}/$short-peers.ini" 0644
}

# The fleet's layout (lib/model/pgbouncer-fleet.ts planFleetProcesses, in shell arithmetic): a target's
# budget is poolSizing() of max_connections, split evenly over every process of the fleet that pools for it;
# never into the ${RESERVED_CONNECTIONS} connections reserved for others (sizing.ts CONNECTION_RESERVE). A role
# with a session listener gives its session pools SESSION_MAX_CONNECTIONS_PERCENT of the budget, no idle floor.
lay_out_processes() {
  local budget usable idle readers per_reader session rw ro
  budget=$(( MAX_CONNECTIONS * MAX_CONNECTIONS_PERCENT / 100 ))
  usable=$(( MAX_CONNECTIONS - ${RESERVED_CONNECTIONS} ))
  if [ "$usable" -lt 0 ]; then usable=0; fi
  if [ "$budget" -gt "$usable" ]; then budget=$usable; fi
  idle=$(( MAX_CONNECTIONS * MAX_IDLE_CONNECTIONS_PERCENT / 100 ))
  session=$(( budget * SESSION_MAX_CONNECTIONS_PERCENT / 100 ))
  rw=$budget
  ro=$budget
  case " $SESSION_LISTENERS " in *" ${FLEET_LISTENER_SHORT.readWriteSession} "*) rw=$(( budget - session )) ;; esac
  case " $SESSION_LISTENERS " in *" ${FLEET_LISTENER_SHORT.readOnlySession} "*) ro=$(( budget - session )) ;; esac
  # Read-only: for each reader, max(1, vCPUs / readers) processes pooling for that reader alone.
  readers=$(echo "$READER_ENDPOINTS" | wc -w)
  per_reader=$(( VCPUS / readers ))
  if [ "$per_reader" -lt 1 ]; then per_reader=1; fi
  NAMES=""
  lay_out ${FLEET_LISTENER_SHORT.readWrite} ${FLEET_PORTS.readWrite} "$rw" "$idle" "$VCPUS" "$CLUSTER_ENDPOINT"
  lay_out ${FLEET_LISTENER_SHORT.readOnly} ${FLEET_PORTS.readOnly} "$ro" "$idle" "$per_reader" $READER_ENDPOINTS
  case " $SESSION_LISTENERS " in *" ${FLEET_LISTENER_SHORT.readWriteSession} "*) lay_out ${FLEET_LISTENER_SHORT.readWriteSession} ${FLEET_PORTS.readWriteSession} "$session" 0 "$VCPUS" "$CLUSTER_ENDPOINT" ;; esac
  case " $SESSION_LISTENERS " in *" ${FLEET_LISTENER_SHORT.readOnlySession} "*) lay_out ${FLEET_LISTENER_SHORT.readOnlySession} ${FLEET_PORTS.readOnlySession} "$session" 0 "$per_reader" $READER_ENDPOINTS ;; esac
  echo "$NAMES" | write_file ${FLEET_PROCESS_LIST} 0644
}

configure() {
${heredoc(`${FLEET_PATHS.dir}/templates/common.ini.in`, '0644', renderFleetCommonTemplate())}
${FLEET_LISTENERS.map((l: FleetListener) => heredoc(`${FLEET_PATHS.dir}/templates/${FLEET_LISTENER_SHORT[l]}.ini.in`, '0644', deployTokens(renderFleetProcessTemplate(l)))).join('\n')}
${heredoc(`${FLEET_PATHS.dir}/templates/route.ini.in`, '0644', deployTokens(renderFleetRouteTemplate()))}
  # Keepalives below the NLB's idle timeout (fleetKeepalive): probe a quiet client before the NLB forgets it.
  local keepidle
  keepidle=$(( TCP_IDLE_TIMEOUT_SECONDS / 2 ))
  if [ "$keepidle" -gt ${KEEPALIVE_MAX_IDLE_SECONDS} ]; then keepidle=${KEEPALIVE_MAX_IDLE_SECONDS}; fi
  sed -e "s#${c.maxClientConnections}#$MAX_CLIENT_CONNECTIONS#g" -e "s#${c.borrowTimeoutSeconds}#$BORROW_TIMEOUT_SECONDS#g" -e "s#${c.keepIdleSeconds}#$keepidle#g" -e "s#${c.clientIdleTimeoutSeconds}#$TCP_IDLE_TIMEOUT_SECONDS#g" \\
    "$ROOT/${FLEET_PATHS.dir}/templates/common.ini.in" | write_file ${FLEET_PATHS.commonIni} 0644
  mkdir -p "$ROOT/${FLEET_PATHS.routesDir}"
  chown "$(file_owner)" "$ROOT/${FLEET_PATHS.routesDir}"
  lay_out_processes
  echo "$FLEET_NAME" | write_file ${FLEET_NAME_FILE} 0644
  mkdir -p "$ROOT/${FLEET_PATHS.dir}/tls"
  APK_FILE_OWNER=$(file_owner) "$ROOT${HOST_AGENT_PATH}" tls "$TLS_SECRET_ARN" "$ROOT/${FLEET_PATHS.dir}/tls"
  # The refresh timer reads the secrets' ARNs from this file.
  echo "$SERVER_SECRET_ARN $CONSUMER_SECRET_ARNS" | write_file ${FLEET_SECRET_ARNS} 0600
  APK_FILE_OWNER=$(file_owner) "$ROOT${HOST_AGENT_PATH}" auth-file "$ROOT/${FLEET_PATHS.authFile}" "$SERVER_SECRET_ARN" "$CONSUMER_SECRET_ARNS"
}

start_processes() {
  skipped start && return 0
${heredoc('etc/systemd/system/apk-pgbouncer@.service', '0644', PROCESS_UNIT)}
${heredoc(`etc/systemd/system/${SERVE_UNIT_NAME}`, '0644', SERVE_UNIT)}
${heredoc('usr/local/sbin/apk-refresh-auth', '0755', refreshAuth)}
${heredoc('etc/systemd/system/apk-refresh-auth.service', '0644', REFRESH_SERVICE)}
${heredoc('etc/systemd/system/apk-refresh-auth.timer', '0644', REFRESH_TIMER)}
  systemctl daemon-reload
  for name in $(cat "/${FLEET_PROCESS_LIST}"); do systemctl enable --now "apk-pgbouncer@$name.service"; done
  systemctl enable --now ${SERVE_UNIT_NAME} apk-refresh-auth.timer
}

write_fetcher
sync_clock
install_packages
configure
start_processes
signal_serving
`;
  if (text.includes('${')) throw new Error('the bootstrap program holds "${": it reads the fleet\'s values from its environment only');
  return withoutComments(text);
}

/**
 * The user data: one fixed text for every fleet. Its first lines export each placeholder's value (what
 * Fn::Sub and templatefile substitute), then the program, gzip + base64, runs. EC2 user data is limited
 * to 16 KB and the placeholders may take about 4.6 KB at their longest (15 readers, 15 consumer secrets),
 * so the program travels compressed, once (the host agent inside it is not compressed on its own).
 */
export function renderPoolerBootstrap(): string {
  const exported = Object.values(BOOTSTRAP_PLACEHOLDERS).map((p) => `export ${placeholderVariable(p)}="${p}"`);
  const rendered = `#!/bin/bash
# aurora-proxy-kit PgBouncer engine host bootstrap, rendered by lib/model/pgbouncer-bootstrap.ts; do not edit.
set -euo pipefail
${exported.join('\n')}
program=$(mktemp)
trap 'rm -f "$program"' EXIT
base64 --decode <<'APK_EOF' | gunzip >"$program"
${compressed(renderPoolerBootstrapProgram())}
APK_EOF
bash "$program"
`;
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
