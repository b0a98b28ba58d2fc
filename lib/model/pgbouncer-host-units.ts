/**
 * The systemd units the PgBouncer engine's bootstrap installs on a host (pgbouncer-bootstrap.ts): one
 * template unit per PgBouncer process, the host agent's `serve` (health endpoint, metrics exporter), and
 * the timer that re-reads the secrets. Every service restarts FLEET_RESTART_SECONDS after it exits, up to
 * FLEET_START_LIMIT.
 */
import { FLEET_PATHS } from './pgbouncer-fleet';
import { HOST_AGENT_PATH } from './pgbouncer-host-agent';

/** The OS user the PgBouncer processes run as. */
export const FLEET_OS_USER = 'pgbouncer';
/** How often a host re-reads the secrets and reloads PgBouncer (rotation). */
export const AUTH_REFRESH_MINUTES = 5;
/** systemd's Restart= delay of every unit of the host; the rehearsal's stand-in for systemd uses it too. */
export const FLEET_RESTART_SECONDS = 1;
/**
 * systemd's crash-loop limit of the PgBouncer units, stated rather than left to the distribution's default:
 * a unit started more than `burst` times within `intervalSeconds` stays failed, and powers the host off
 * (PGBOUNCER_START_LIMIT_ACTION) for the Auto Scaling group's EC2 checks to replace it. The rehearsal's
 * stand-in for systemd applies the same limit.
 */
export const FLEET_START_LIMIT = { intervalSeconds: 10, burst: 5 } as const;
const START_LIMIT = `StartLimitIntervalSec=${FLEET_START_LIMIT.intervalSeconds}
StartLimitBurst=${FLEET_START_LIMIT.burst}`;
/**
 * What a PgBouncer unit does at its start limit: power the host off. The Auto Scaling group's EC2 health
 * checks find it not running and replace it (FLEET_HOST_HEALTH_CHECK_TYPE). The agent's unit has no limit
 * (NO_START_LIMIT): it restarts as long as it exits, since a host whose health endpoint stayed down would
 * take no new clients yet never be replaced, and an agent that fails on every host must not power off the fleet.
 */
export const PGBOUNCER_START_LIMIT_ACTION = 'poweroff';
/** systemd's way to turn the start limit off (StartLimitIntervalSec=0). */
const NO_START_LIMIT = 'StartLimitIntervalSec=0';
/** The unit of `apk-host serve`: the health endpoint and the metrics exporter (pgbouncer-host-serve.ts). */
export const SERVE_UNIT_NAME = 'apk-host.service';

export const PROCESS_UNIT = `[Unit]
Description=PgBouncer %i of the aurora-proxy-kit PgBouncer engine
After=network-online.target
Wants=network-online.target
${START_LIMIT}
StartLimitAction=${PGBOUNCER_START_LIMIT_ACTION}

[Service]
Type=notify
User=${FLEET_OS_USER}
ExecStart=/usr/sbin/pgbouncer /${FLEET_PATHS.dir}/%i.ini
ExecReload=/bin/kill -HUP $MAINPID
RuntimeDirectory=pgbouncer/%i
RuntimeDirectoryMode=0700
Restart=always
RestartSec=${FLEET_RESTART_SECONDS}
LimitNOFILE=65536

[Install]
WantedBy=multi-user.target
`;

// As PgBouncer's user: the admin console admits the user pgbouncer without a password from that Unix user only.
export const SERVE_UNIT = `[Unit]
Description=Health endpoint and CloudWatch metrics of the aurora-proxy-kit PgBouncer engine
After=network-online.target
Wants=network-online.target
${NO_START_LIMIT}

[Service]
User=${FLEET_OS_USER}
ExecStart=${HOST_AGENT_PATH} serve
Restart=always
RestartSec=${FLEET_RESTART_SECONDS}

[Install]
WantedBy=multi-user.target
`;

export const REFRESH_SERVICE = `[Unit]
Description=Re-read the aurora-proxy-kit PgBouncer engine's secrets and reload PgBouncer

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/apk-refresh-auth
`;

export const REFRESH_TIMER = `[Unit]
Description=Re-read the PgBouncer engine's secrets every ${AUTH_REFRESH_MINUTES} minutes

[Timer]
OnBootSec=${AUTH_REFRESH_MINUTES}min
OnUnitActiveSec=${AUTH_REFRESH_MINUTES}min

[Install]
WantedBy=timers.target
`;
