/**
 * The PgBouncer engine's host agent, `apk-host serve` (a systemd unit of its own, as the PgBouncer user):
 * the load balancer's health endpoint and the CloudWatch metrics exporter, in one standard-library
 * Python process beside the PgBouncer processes. Both read PgBouncer through each process's admin
 * console on its Unix socket, as the user `pgbouncer`, which PgBouncer admits without a password when
 * the client runs as PgBouncer's own Unix user (PgBouncer usage, "Admin console"); no password of the
 * console exists on the host.
 *
 * Health: `GET <path>` of a listener answers 200 only while every process of that listener answers on
 * its admin socket AND every server its pools use has shown it is alive, else 503 with the reasons
 * (SHOW DATABASES gives each pool's host and port, as PgBouncer itself resolves them, re-read after a
 * RELOAD). A server has shown it is alive when its pools completed queries since the previous verdict
 * (SHOW STATS total_query_count grew, within HEALTH_EVIDENCE_SECONDS): it answered, which says more
 * than a connect. Otherwise (an idle pool, a server that stopped answering) the verdict connects to it
 * over TCP. Why not pool state alone (SHOW SERVERS / SHOW POOLS): it only describes connections already
 * open; a pool with none (min_pool_size 0, or all closed after server_lifetime) says nothing, and an
 * open connection to a server that vanished stays `idle` until server_check_delay or a keepalive finds
 * it. A connect tests the path now (routes, security groups, the instance listening) but costs the
 * server a fork and, as the cluster sets log_connections=1, a "connection received" log line (PostgreSQL
 * logs it at accept, before any startup packet): hence connects only where queries did not answer, so a
 * busy fleet's checks make no log lines and an idle one's a few per interval (results are kept
 * HEALTH_CACHE_SECONDS, so the load balancer's nodes, which each check every interval, share them).
 * Not covered: a server that accepts connections but refuses logins (the dashboard's server connections
 * show that).
 *
 * Metrics: every period, SHOW DATABASES, SHOW POOLS and SHOW STATS of every process, combined per
 * (Listener, Target) by POOLER_METRICS (pgbouncer-metrics.ts; counters as deltas since the previous
 * sample, the first sample only sets the baseline), published with one PutMetricData (Query protocol)
 * signed with SigV4 through the monitoring interface endpoint.
 *
 * The Python is host/apk_host.py (`serve`, `health`, `sample`); the constants below reach it through kit.json
 * (pgbouncer-host-kit.ts).
 */
import { FLEET_PATHS, type FleetListener } from './pgbouncer-fleet';

/** The health endpoint's port on each host (the load balancer's health checks; the hosts' security group admits it). */
export const POOLER_HEALTH_PORT = 6480;
/** The path of each listener's health (the NLB target group of that listener checks it). */
export const POOLER_HEALTH_PATHS: Readonly<Record<FleetListener, string>> = { readWrite: '/read-write', readOnly: '/read-only', readWriteSession: '/read-write-session', readOnlySession: '/read-only-session' };

/** The target groups' health checks, the same in both flavours. */
export const POOLER_HEALTH_CHECK = { intervalSeconds: 10, timeoutSeconds: 5, healthyThreshold: 2, unhealthyThreshold: 2 } as const;
/** How long a health result is reused, and the timeout of each server connect (both under the check's timeout). */
export const HEALTH_CACHE_SECONDS = 2;
export const HEALTH_CONNECT_TIMEOUT_SECONDS = 2;
/**
 * How recent the previous verdict's query totals must be for their growth to stand for a connect: two
 * check intervals, so a server that stops answering is connected to within one more interval.
 */
export const HEALTH_EVIDENCE_SECONDS = 2 * POOLER_HEALTH_CHECK.intervalSeconds;
/** The fleet's name for the Fleet dimension, written by the bootstrap (a placeholder's value). */
export const FLEET_NAME_FILE = `${FLEET_PATHS.dir}/fleet-name`;
