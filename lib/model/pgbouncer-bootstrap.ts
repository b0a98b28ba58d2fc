/**
 * The PgBouncer engine's host bootstrap: the user data every pooler host runs at first boot, rendered
 * from the fleet plan (pgbouncer-fleet.ts) as one template text for both flavours. Its placeholders are
 * `${Name}` (BOOTSTRAP_PLACEHOLDERS), which CloudFormation's Fn::Sub and Terraform's templatefile both
 * substitute; the script itself never writes "${" or "%{" (a test holds it to that), so neither
 * flavour reads anything else as a reference or a directive.
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
import { FLEET_PATHS, fleetProcessName, planFleetProcesses, processTemplateValues, renderFleetCommonIni, renderFleetPeersIni, renderFleetProcessTemplate, type PoolerFleetSpec } from './pgbouncer-fleet';

/** The placeholders beyond the fleet files' own (FLEET_PLACEHOLDERS), each a deploy-time value. */
export const BOOTSTRAP_PLACEHOLDERS = {
  /** The S3 object holding the Debian packages, SHA256SUMS and the RDS CA bundle. */
  packagesBucket: '${PackagesBucket}',
  packagesKey: '${PackagesKey}',
  /** The read-only listener's server role: {"username", "password"}. */
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

/** A file written through write_file: content in a quoted heredoc (no shell expansion), root marker replaced. */
function heredoc(relativePath: string, mode: string, content: string): string {
  if (content.includes('\nAPK_EOF\n')) throw new Error(`${relativePath} contains the heredoc delimiter`);
  return `write_file ${relativePath} ${mode} <<'APK_EOF'\n${content.endsWith('\n') ? content : `${content}\n`}APK_EOF`;
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

/**
 * EC2 user data is limited to 16 KB in raw form, before base64 (EC2 User Guide, user-data.html: "User
 * data is limited to 16 KB, in raw form, before it is base64-encoded").
 */
export const USER_DATA_MAX_BYTES = 16 * 1024;

/** The longest value each placeholder can take once substituted (RDS endpoints, Secrets Manager ARNs, S3 names). */
const PLACEHOLDER_MAX_BYTES: Readonly<Record<string, number>> = {
  ClusterEndpoint: 128,
  DatabaseName: 63,
  ServerPort: 5,
  PackagesBucket: 63,
  PackagesKey: 256,
  ServerSecretArn: 2048,
  TlsSecretArn: 2048,
};
/** Consumer secrets the estimate allows for (an ARN is at most 2048 bytes, in practice about 90). */
export const BOOTSTRAP_CONSUMERS_ESTIMATE = 10;

/** The bootstrap's size with every placeholder at its longest (ARNs at a realistic 128 bytes). */
export function worstCaseUserDataBytes(template: string): number {
  let bytes = Buffer.byteLength(template);
  for (const match of template.matchAll(/\$\{([A-Za-z0-9]+)\}/g)) {
    const name = match[1]!;
    const longest = name === 'ConsumerSecretArns' ? BOOTSTRAP_CONSUMERS_ESTIMATE * 129 : name.startsWith('ReaderEndpoint') ? 128 : Math.min(PLACEHOLDER_MAX_BYTES[name] ?? 256, 128);
    bytes += longest - match[0].length;
  }
  return bytes;
}

/** gzip -9 + base64 in 76-column lines (what `base64 --decode` reads). */
function compressed(text: string): string {
  return (gzipSync(Buffer.from(text), { level: 9 }).toString('base64').match(/.{1,76}/g) ?? []).join('\n');
}

/** The bootstrap's template text for a fleet. */
export function renderPoolerBootstrap(spec: PoolerFleetSpec): string {
  const processes = planFleetProcesses(spec);
  const files = [
    heredoc(FLEET_PATHS.commonIni, '0644', renderFleetCommonIni(spec)),
    heredoc(`${FLEET_PATHS.dir}/rw-peers.ini`, '0644', renderFleetPeersIni('readWrite', processes)),
    heredoc(`${FLEET_PATHS.dir}/ro-peers.ini`, '0644', renderFleetPeersIni('readOnly', processes)),
    heredoc(`${FLEET_PATHS.dir}/templates/rw.ini.in`, '0644', renderFleetProcessTemplate('readWrite')),
    heredoc(`${FLEET_PATHS.dir}/templates/ro.ini.in`, '0644', renderFleetProcessTemplate('readOnly')),
  ];
  const instances = processes.map((proc) => {
    const v = processTemplateValues(proc);
    return `process_ini ${proc.listener === 'readWrite' ? 'rw' : 'ro'} ${v.name} ${v.target} "${v.serverHost}" ${v.peerId} ${v.poolSize} ${v.minPoolSize}`;
  });
  const names = processes.map(fleetProcessName).join(' ');
  const p = BOOTSTRAP_PLACEHOLDERS;
  const authFile = `"$ROOT/${FLEET_PATHS.authFile}"`;
  const refreshAuth = `#!/bin/bash\nset -euo pipefail\nexport APK_FILE_OWNER=$(id -u ${FLEET_OS_USER}):$(id -g ${FLEET_OS_USER})\n${HOST_AGENT_PATH} auth-file /${FLEET_PATHS.authFile} "${p.serverSecretArn}" "${p.consumerSecretArns}"\nsystemctl reload 'apk-pgbouncer@*'\n`;
  const text = `#!/bin/bash
# aurora-proxy-kit PgBouncer engine host bootstrap, rendered by lib/model/pgbouncer-bootstrap.ts; do not edit.
# Fleet: ${spec.hosts} hosts x ${spec.vcpusPerHost} vCPUs, ${spec.readers} readers; processes on each host: ${names}.
set -euo pipefail
umask 022
# The rehearsal's stand-ins (unset on a host): a directory for /, files for AWS, steps it does itself.
ROOT=$(printenv APK_ROOT || true)
SKIP=" $(printenv APK_SKIP || true) "

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
# the listener's template (lib/model/pgbouncer-fleet.ts renderFleetProcessTemplate) with the process's values.
process_ini() {
  sed -e "s#@NAME@#$2#g" -e "s#@TARGET@#$3#g" -e "s#@HOST@#$4#g" -e "s#@PEER@#$5#g" -e "s#@POOL@#$6#g" -e "s#@MINPOOL@#$7#g" \
    "$ROOT/${FLEET_PATHS.dir}/templates/$1.ini.in" | write_file "${FLEET_PATHS.dir}/$2.ini" 0644
}

configure() {
${files.join('\n')}
${instances.map((line) => `  ${line}`).join('\n')}
  mkdir -p "$ROOT/${FLEET_PATHS.dir}/tls"
  APK_FILE_OWNER=$(file_owner) "$ROOT${HOST_AGENT_PATH}" tls "${p.tlsSecretArn}" "$ROOT/${FLEET_PATHS.dir}/tls"
  APK_FILE_OWNER=$(file_owner) "$ROOT${HOST_AGENT_PATH}" auth-file ${authFile} "${p.serverSecretArn}" "${p.consumerSecretArns}"
}

start_processes() {
  skipped start && return 0
${heredoc('etc/systemd/system/apk-pgbouncer@.service', '0644', PROCESS_UNIT)}
${heredoc('usr/local/sbin/apk-refresh-auth', '0755', refreshAuth)}
${heredoc('etc/systemd/system/apk-refresh-auth.service', '0644', REFRESH_SERVICE)}
${heredoc('etc/systemd/system/apk-refresh-auth.timer', '0644', REFRESH_TIMER)}
  systemctl daemon-reload
  for name in ${names}; do systemctl enable --now "apk-pgbouncer@$name.service"; done
  systemctl enable --now apk-refresh-auth.timer
}

write_agent
install_packages
configure
start_processes
`;
  const worst = worstCaseUserDataBytes(text);
  if (worst > USER_DATA_MAX_BYTES) {
    throw new Error(
      `vcpusPerHost ${spec.vcpusPerHost} with readers ${spec.readers} gives ${processes.length} PgBouncer processes per host, and a bootstrap of up to ${worst} bytes: EC2 user data is limited to ${USER_DATA_MAX_BYTES} bytes; use an instance type with fewer vCPUs (and more hosts), or fewer readers`,
    );
  }
  return text;
}
