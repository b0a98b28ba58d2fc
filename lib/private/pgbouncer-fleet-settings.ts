import { Duration, Stack, Token } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { DEFAULT_POOL_SETTINGS, PGBOUNCER_PROXY_RULES, PROXY_RULES, PoolSettings, evaluateRules, runRules } from '../model';
import { DEFAULT_FLEET_HOSTS, DEFAULT_SESSION_MAX_CONNECTIONS_PERCENT, NLB_DEFAULT_TCP_IDLE_TIMEOUT_SECONDS, type PoolerFleetSpec } from '../model/pgbouncer-fleet';
import { FLEET_RULES } from '../model/pgbouncer-fleet-rules';
import { DEFAULT_POOLER_INSTANCE_TYPE, DEFAULT_POOLER_READ_ONLY_SERVER_USER, POOLER_HOST_RULES, poolerInstanceVcpus } from '../model/pgbouncer-hosts';
import { tlsCertificateProblems } from '../pgbouncer-certificate';
import type { PgBouncerProxyProps } from '../pgbouncer-proxy-props';
import { throwIfInvalid } from './validation';

/** A PgBouncerProxy's settings: its props with their defaults, checked by every rule that applies to them. */
export interface PgBouncerFleetSettings {
  readonly pool: PoolSettings;
  readonly instanceType: string;
  readonly serverUser: string;
  readonly fleet: PoolerFleetSpec;
  /** The Fleet dimension of the hosts' metrics. */
  readonly fleetName: string;
}

/** A value the rules can check at synth, or undefined for a token. */
const known = (value: string): string | undefined => (Token.isUnresolved(value) ? undefined : value);

/**
 * The settings of the PgBouncerProxy `scope`, or a validation error naming its path and every bad prop: checked
 * before anything is built.
 */
export function pgBouncerFleetSettings(scope: Construct, props: PgBouncerProxyProps): PgBouncerFleetSettings {
  const pool: PoolSettings = {
    maxConnectionsPercent: props.maxConnectionsPercent ?? DEFAULT_POOL_SETTINGS.maxConnectionsPercent,
    maxIdleConnectionsPercent: props.maxIdleConnectionsPercent ?? DEFAULT_POOL_SETTINGS.maxIdleConnectionsPercent,
    connectionBorrowTimeoutSeconds: props.connectionBorrowTimeout?.toSeconds() ?? DEFAULT_POOL_SETTINGS.connectionBorrowTimeoutSeconds,
  };
  const instanceType = props.instanceType ?? DEFAULT_POOLER_INSTANCE_TYPE;
  const serverUser = props.readOnlyServerUser ?? DEFAULT_POOLER_READ_ONLY_SERVER_USER;
  const spec = {
    hosts: props.hosts ?? DEFAULT_FLEET_HOSTS,
    vcpusPerHost: poolerInstanceVcpus(instanceType),
    readers: props.cluster.readerInstanceIdentifiers.length,
    maxConnections: props.cluster.sizing.maxConnections,
    pool,
    tcpIdleTimeoutSeconds: (props.tcpIdleTimeout ?? Duration.seconds(NLB_DEFAULT_TCP_IDLE_TIMEOUT_SECONDS)).toSeconds(),
    sessionMaxConnectionsPercent: props.sessionMaxConnectionsPercent ?? DEFAULT_SESSION_MAX_CONNECTIONS_PERCENT,
  };
  const stack = Stack.of(scope);
  const fleetName = props.fleetName ?? (Token.isUnresolved(stack.stackName) ? scope.node.path : [stack.stackName, ...scope.node.scopes.slice(scope.node.scopes.indexOf(stack) + 1).map((c) => c.node.id)].join('/'));
  throwIfInvalid(scope, [
    ...runRules(PROXY_RULES, pool),
    // The packages object's names are checked where known at synth (a bucket made in the same stack has a token).
    ...evaluateRules(
      PGBOUNCER_PROXY_RULES,
      { fleetName, packagesBucket: known(props.packages.bucket.bucketName), packagesKey: known(props.packages.key) },
      (rule) => ({ ...rule.names, packagesBucket: 'packages.bucket', packagesKey: 'packages.key' }),
    ).map((v) => v.message),
    ...runRules(POOLER_HOST_RULES, { instanceType, readOnlyServerUser: serverUser, imageId: props.imageId === undefined ? undefined : known(props.imageId) }),
    // Named as the props are: the fleet's vCPUs come from instanceType, its idle timeout is a Duration.
    ...evaluateRules(FLEET_RULES, spec as PoolerFleetSpec, (rule) => ({ ...rule.names, tcpIdleTimeoutSeconds: 'tcpIdleTimeout' })).map((v) => v.message),
    ...tlsCertificateProblems(props.tlsCertificate),
  ]);
  return { pool, instanceType, serverUser, fleet: spec as PoolerFleetSpec, fleetName };
}
