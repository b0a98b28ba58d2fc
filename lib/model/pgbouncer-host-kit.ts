/**
 * What the host software (host/) takes from the model: kit.json (the agent's constants: ports, health paths,
 * metrics, paths, the budget's reserve, the template tokens), kit.env (the few the bootstrap's shell needs) and
 * the fleet's ini templates, each rendered here from the model's own constants and carried in the user data.
 * So a constant has one home, the model, and the Python and shell read it instead of restating it.
 *
 * The fleet's layout (which processes, which pool sizes) is computed on the host by `apk-host configure`
 * (host/apk_host.py plan()): a Terraform module's values are known only at apply, so no synth-time table could
 * hold them. The model's planFleetProcesses is what the constructs' rules and summaries read; its tests run the
 * host's plan() on the same fleets and compare, file for file.
 */
import { SCRAM_SALT_CONTEXT } from './scram-salt';
import { FLEET_LISTENER_SHORT, FLEET_LISTENERS, FLEET_PATHS, FLEET_PLACEHOLDERS, FLEET_PORTS, fleetListenerPoolMode, fleetListenerRole, KEEPALIVE_MAX_IDLE_SECONDS, READ_ONLY_ROUTING } from './pgbouncer-fleet';
import { COMMON_TEMPLATE_TOKENS, PROCESS_TEMPLATE_TOKENS, renderFleetCommonTemplate, renderFleetProcessTemplate, renderFleetRouteTemplate } from './pgbouncer-fleet-files';
import { PoolMode } from './pgbouncer-ini';
import { POOLER_METRIC_LISTENERS, POOLER_METRICS, POOLER_METRICS_NAMESPACE, POOLER_METRICS_PERIOD_SECONDS } from './pgbouncer-metrics';
import { FLEET_NAME_FILE, HEALTH_CACHE_SECONDS, HEALTH_CONNECT_TIMEOUT_SECONDS, HEALTH_EVIDENCE_SECONDS, POOLER_HEALTH_PATHS, POOLER_HEALTH_PORT } from './pgbouncer-host-serve';
import { FLEET_HOST_SERVE_WAIT_SECONDS } from './pgbouncer-rollout';
import { RESERVED_CONNECTIONS } from './sizing';

/** The names of the processes `apk-host configure` laid out, space-separated (the start step and the rehearsal read it). */
export const FLEET_PROCESS_LIST = `${FLEET_PATHS.dir}/processes`;
/** The Amazon Time Sync Service's address in every VPC (EC2 User Guide, configure-ec2-ntp.html). */
export const AMAZON_TIME_SYNC = '169.254.169.123';

/**
 * The tokens the process templates carry for the deploy-time values (the `${Name}` placeholders of the model's
 * rendering), and the environment variable of the user data that holds each.
 */
export const DEPLOY_TOKENS = [
  [FLEET_PLACEHOLDERS.databaseName, '@DATABASE@', 'DATABASE_NAME'],
  [FLEET_PLACEHOLDERS.serverPort, '@SERVER_PORT@', 'SERVER_PORT'],
  [FLEET_PLACEHOLDERS.serverUser, '@SERVER_USER@', 'SERVER_USER'],
  [FLEET_PLACEHOLDERS.clusterEndpoint, '@CLUSTER@', 'CLUSTER_ENDPOINT'],
  [FLEET_PLACEHOLDERS.writerInstanceEndpoint, '@SPARE@', 'WRITER_INSTANCE_ENDPOINT'],
] as const;

function deployTokens(template: string): string {
  return DEPLOY_TOKENS.reduce((text, [placeholder, token]) => text.replaceAll(placeholder, token), template);
}

/** The fleet's templates, by file name: the shared settings, each listener's process file, the read-only route file. */
export function renderHostTemplates(): Map<string, string> {
  return new Map([
    ['common.ini.in', renderFleetCommonTemplate()],
    ...FLEET_LISTENERS.map((l): [string, string] => [`${FLEET_LISTENER_SHORT[l]}.ini.in`, deployTokens(renderFleetProcessTemplate(l))]),
    ['route.ini.in', deployTokens(renderFleetRouteTemplate())],
  ]);
}

const byShort = <T>(value: (l: (typeof FLEET_LISTENERS)[number]) => T): Record<string, T> => Object.fromEntries(FLEET_LISTENERS.map((l) => [FLEET_LISTENER_SHORT[l], value(l)]));
const absolute = (relative: string): string => `/${relative}`;

/** kit.json: the agent's constants, as host/apk_host.py reads them (its kit()). */
export function hostKitSettings(): Record<string, unknown> {
  return {
    listeners: FLEET_LISTENERS.map((l) => ({ short: FLEET_LISTENER_SHORT[l], role: fleetListenerRole(l), session: fleetListenerPoolMode(l) === PoolMode.SESSION })),
    ports: byShort((l) => FLEET_PORTS[l]),
    healthPort: POOLER_HEALTH_PORT,
    healthPaths: Object.fromEntries(FLEET_LISTENERS.map((l) => [POOLER_HEALTH_PATHS[l], FLEET_LISTENER_SHORT[l]])),
    health: { cacheSeconds: HEALTH_CACHE_SECONDS, connectTimeoutSeconds: HEALTH_CONNECT_TIMEOUT_SECONDS, evidenceSeconds: HEALTH_EVIDENCE_SECONDS },
    metricListeners: byShort((l) => POOLER_METRIC_LISTENERS[l]),
    metrics: POOLER_METRICS.map((m) => [m.metricName, m.unit, m.source.command, m.source.columns, m.source.combine]),
    metricsNamespace: POOLER_METRICS_NAMESPACE,
    metricsPeriodSeconds: POOLER_METRICS_PERIOD_SECONDS,
    routeIntervalSeconds: READ_ONLY_ROUTING.intervalSeconds,
    saltContext: SCRAM_SALT_CONTEXT,
    reservedConnections: RESERVED_CONNECTIONS,
    keepaliveMaxIdleSeconds: KEEPALIVE_MAX_IDLE_SECONDS,
    tokens: { ...PROCESS_TEMPLATE_TOKENS, ...COMMON_TEMPLATE_TOKENS },
    // Each deploy-time token and the user data's variable whose value replaces it.
    deployTokens: Object.fromEntries(DEPLOY_TOKENS.map(([, token, variable]) => [token, variable])),
    paths: {
      commonIni: absolute(FLEET_PATHS.commonIni),
      processes: absolute(FLEET_PROCESS_LIST),
      fleetName: absolute(FLEET_NAME_FILE),
      runDir: absolute(FLEET_PATHS.runDir),
      routesDir: absolute(FLEET_PATHS.routesDir),
    },
  };
}

export function renderHostKitJson(): string {
  return `${JSON.stringify(hostKitSettings())}\n`;
}

/** kit.env: what host/bootstrap.sh sources. */
export function renderHostKitEnv(): string {
  const urls = (['readWrite', 'readOnly'] as const).map((l) => `http://127.0.0.1:${POOLER_HEALTH_PORT}${POOLER_HEALTH_PATHS[l]}`);
  return [`SERVE_WAIT_SECONDS=${FLEET_HOST_SERVE_WAIT_SECONDS}`, `HEALTH_URLS="${urls.join(' ')}"`, `TIME_SYNC=${AMAZON_TIME_SYNC}`, ''].join('\n');
}
