import { renderPoolerBootstrap, USER_DATA_MAX_BYTES } from '../model/pgbouncer-bootstrap';
import { DEFAULT_FLEET_MAX_CLIENT_CONNECTIONS, FLEET_HOST_HEALTH_CHECK_TYPE, FLEET_HOST_WARMUP_SECONDS, FLEET_LISTENER_SHORT, FLEET_LISTENERS, FLEET_PORTS, fleetListenerPoolMode, fleetListenerRole } from '../model/pgbouncer-fleet';
import { GRAVITON_SIZE_VCPUS, POOLER_INSTANCE_FAMILIES, poolerListenerPort, SESSION_MANAGER_INSTANCE_POLICY } from '../model/pgbouncer-hosts';
import { POOLER_HEALTH_CHECK, POOLER_HEALTH_PATHS, POOLER_HEALTH_PORT } from '../model/pgbouncer-host-serve';
import { POOLER_METRIC_LISTENERS, POOLER_METRICS_NAMESPACE, POOLER_METRICS_POLICY } from '../model/pgbouncer-metrics';
import { FLEET_HOST_SIGNAL_TIMEOUT_SECONDS } from '../model/pgbouncer-rollout';
import { poolBudgetLocals } from './catalogs';
import { alignedMap, generatedBy, hclString, hclValue } from './hcl';

/**
 * What modules/pgbouncer-proxy restates of lib/model: the bootstrap template (the same text the CDK
 * construct passes to Fn::Sub, for templatefile) and the hosts' catalog as locals.
 */
export const PGBOUNCER_MODULE = 'pgbouncer-proxy';
export const PGBOUNCER_BOOTSTRAP_FILE = `modules/${PGBOUNCER_MODULE}/templates/bootstrap.sh.tftpl`;

/**
 * The bootstrap, byte for byte: no header can precede its `#!` line, and its second line already says it
 * is rendered by the model. It uses only `${Name}` placeholders, so templatefile substitutes exactly them.
 */
export function renderPgBouncerBootstrapTemplate(): string {
  const template = renderPoolerBootstrap();
  if (/%\{/.test(template) || /\$\{(?![A-Za-z0-9]+\})/.test(template)) throw new Error('the bootstrap holds a template sequence other than ${Name}: templatefile would not keep it');
  return template;
}

export function renderPgBouncerCatalog(): string {
  return [
    `# ${generatedBy('lib/model/pgbouncer-hosts.ts, pgbouncer-fleet.ts, pgbouncer-host-serve.ts, pgbouncer-metrics.ts and sizing.ts')}`,
    '',
    'locals {',
    '  # The Graviton families the hosts run on, and vCPUs by size (the same in each family).',
    `  pooler_instance_families = ${hclValue(POOLER_INSTANCE_FAMILIES)}`,
    '  graviton_size_vcpus = {',
    ...alignedMap('    ', Object.entries(GRAVITON_SIZE_VCPUS).map(([k, v]) => [k, String(v)] as const)),
    '  }',
    '  # The NLB listener each role\'s consumers connect to in each pool mode (keyed as POOLER_METRIC_LISTENERS: the',
    '  # role, with _SESSION for session pooling), the PgBouncer port it forwards to, and its health path.',
    '  listeners = {',
    ...alignedMap(
      '    ',
      FLEET_LISTENERS.map((l) => [
        POOLER_METRIC_LISTENERS[l],
        hclValue({ port: poolerListenerPort(l), target_port: FLEET_PORTS[l], short: FLEET_LISTENER_SHORT[l], health_path: POOLER_HEALTH_PATHS[l], role: fleetListenerRole(l), pool_mode: fleetListenerPoolMode(l) }),
      ] as const),
    ),
    '  }',
    '  # The hosts\' health endpoint (apk-host serve) and the target groups\' checks of it.',
    ...alignedMap('  ', [
      ['health_port', String(POOLER_HEALTH_PORT)],
      ['health_check', hclValue({ interval: POOLER_HEALTH_CHECK.intervalSeconds, timeout: POOLER_HEALTH_CHECK.timeoutSeconds, healthy_threshold: POOLER_HEALTH_CHECK.healthyThreshold, unhealthy_threshold: POOLER_HEALTH_CHECK.unhealthyThreshold })],
    ]),
    '  # The namespace the hosts publish their metrics to, and the condition key that limits PutMetricData to it.',
    ...alignedMap('  ', [
      ['metrics_namespace', hclString(POOLER_METRICS_NAMESPACE)],
      ['metrics_condition_key', hclString(POOLER_METRICS_POLICY.conditionKey)],
      ['max_client_connections', String(DEFAULT_FLEET_MAX_CLIENT_CONNECTIONS)],
    ]),
    '  # What the SSM Agent needs for Session Manager (AWS\'s minimal instance permissions), not AmazonSSMManagedInstanceCore.',
    `  session_manager_actions = ${hclValue(SESSION_MANAGER_INSTANCE_POLICY.actions)}`,
    '  # How the Auto Scaling group judges hosts (EC2\'s checks only: the load balancer\'s fail on every host at once when',
    '  # Aurora\'s servers do), the warm-up a new host is given, how long an apply waits for every host to serve',
    '  # (CloudFormation\'s signal timeout), and EC2\'s limit on user data (raw, before base64).',
    ...alignedMap('  ', [
      ['host_health_check_type', hclString(FLEET_HOST_HEALTH_CHECK_TYPE)],
      ['host_warmup_seconds', String(FLEET_HOST_WARMUP_SECONDS)],
      ['host_signal_timeout_seconds', String(FLEET_HOST_SIGNAL_TIMEOUT_SECONDS)],
      ['user_data_max_bytes', String(USER_DATA_MAX_BYTES)],
    ]),
    ...poolBudgetLocals({ proxyPercent: false }),
    '}',
    '',
  ].join('\n');
}
