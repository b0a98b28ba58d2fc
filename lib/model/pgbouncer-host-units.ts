/**
 * The systemd units the PgBouncer engine's bootstrap installs on a host (host/*.service, host/*.timer): one
 * template unit per PgBouncer process, the host agent's `serve` (health endpoint, metrics exporter), and
 * the timer that re-reads the secrets. Every service restarts FLEET_RESTART_SECONDS after it exits, up to
 * FLEET_START_LIMIT.
 */
import { hostFile } from './pgbouncer-host-files';

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
/**
 * What a PgBouncer unit does at its start limit: power the host off. The Auto Scaling group's EC2 health
 * checks find it not running and replace it (FLEET_HOST_HEALTH_CHECK_TYPE). The agent's unit has no limit
 * (StartLimitIntervalSec=0): it restarts as long as it exits, since a host whose health endpoint stayed down would
 * take no new clients yet never be replaced, and an agent that fails on every host must not power off the fleet.
 */
export const PGBOUNCER_START_LIMIT_ACTION = 'poweroff';
/** The unit of `apk-host serve`: the health endpoint and the metrics exporter (pgbouncer-host-serve.ts). */
export const SERVE_UNIT_NAME = 'apk-host.service';

/** The units and the refresh script, files of the kit's host/ folder as the bootstrap installs them. */
export const PROCESS_UNIT_NAME = 'apk-pgbouncer@.service';
export const REFRESH_SERVICE_NAME = 'apk-refresh-auth.service';
export const REFRESH_TIMER_NAME = 'apk-refresh-auth.timer';
export const REFRESH_SCRIPT_NAME = 'apk-refresh-auth';
export const HOST_UNIT_FILES = [PROCESS_UNIT_NAME, SERVE_UNIT_NAME, REFRESH_SERVICE_NAME, REFRESH_TIMER_NAME] as const;

/** A unit's file: its settings are the constants above (test/model/pgbouncer-host-files.test.ts holds them to that). */
export function hostUnit(name: (typeof HOST_UNIT_FILES)[number]): string {
  return hostFile(name);
}
