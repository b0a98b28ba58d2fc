import { Duration, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as rds from 'aws-cdk-lib/aws-rds';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct, IDependable } from 'constructs';
import type { DatabaseRoleSpec } from '../../lambda/src/role-bootstrap-request';
import { DEFAULT_PROXY_ENDPOINT_NAME, EndpointRole, PoolSizing, catalogMetric, metricDimensions } from '../model';
import { PoolMode } from '../model/pgbouncer-ini';
import type { IAuroraOptimizedReads } from '../aurora-optimized-reads-attributes';
import { fleetMetric, poolTargetOf, poolerMetric } from '../pgbouncer-metric-options';
import type { PgBouncerProxyAttributes } from '../pgbouncer-proxy-attributes';
import type { RdsProxyAttributes } from '../rds-proxy-attributes';
import { IPoolingTier, IProxyEndpoint, PoolingMetricOptions, ProxyEndpointOptions, ProxyEngine } from '../pooling-tier';
import { combinedMetric, fleetDashboardOf, fleetPoolSignal, proxyDashboardOf, type TierDashboard } from './tier-dashboard';
import { throwIfInvalid } from './validation';

/** What an imported tier of either engine cannot do, and why. */
abstract class ImportedTier extends Construct {
  private readonly sizing?: PoolSizing;

  constructor(scope: Construct, id: string, sizing: PoolSizing | undefined) {
    super(scope, id);
    this.sizing = sizing;
  }

  public get poolSizing(): PoolSizing {
    throwIfInvalid(this, [this.sizing === undefined ? 'poolSizing of an imported pooling tier is unknown: pass poolSizing in its attributes (the tier\'s poolSizing in its app)' : undefined]);
    return this.sizing!;
  }

  public addReadOnlyEndpoint(id: string, _options: ProxyEndpointOptions): IProxyEndpoint {
    return this.refuseEndpoint(id, EndpointRole.READ_ONLY);
  }

  public addReadWriteEndpoint(id: string, _options: ProxyEndpointOptions): IProxyEndpoint {
    return this.refuseEndpoint(id, EndpointRole.READ_WRITE);
  }

  private refuseEndpoint(id: string, role: EndpointRole): never {
    throwIfInvalid(this, [
      `endpoint ${id}: an imported pooling tier cannot add endpoints (its app owns its resources and limits): add the ${role} endpoint in the tier's app and import it here with fromRdsProxyEndpointAttributes or fromPgBouncerProxyEndpointAttributes`,
    ]);
    throw new Error('unreachable');
  }
}

/** An RDS Proxy of another stack or app (RdsProxy.fromRdsProxyAttributes). */
export class ImportedRdsProxy extends ImportedTier implements IPoolingTier {
  public readonly engine: ProxyEngine = ProxyEngine.RDS_PROXY;
  /** None: RDS Proxy logs in as each client's own user. */
  public readonly serverRoles: DatabaseRoleSpec[] = [];
  private readonly attrs: RdsProxyAttributes;
  private readonly proxy: rds.IDatabaseProxy;

  constructor(scope: Construct, id: string, attrs: RdsProxyAttributes) {
    super(scope, id, attrs.poolSizing);
    this.attrs = attrs;
    this.proxy = rds.DatabaseProxy.fromDatabaseProxyAttributes(this, 'Proxy', { dbProxyArn: attrs.proxyArn, dbProxyName: attrs.proxyName, endpoint: attrs.defaultEndpoint, securityGroups: [] });
  }

  /** `rds-db:connect` through the proxy as `dbUser`; the proxy's own login as that user is its app's (RdsProxy.allowDatabaseUser). */
  public grantConnect(grantee: iam.IGrantable, dbUser: string): iam.Grant {
    return this.proxy.grantConnect(grantee, dbUser);
  }

  public consumerPasswordSecret(_dbUser: string): secretsmanager.ISecret | undefined {
    return undefined;
  }

  /** Nothing waits: RDS Proxy logs in as a client's user only when that client connects. */
  public waitForDatabaseRoles(_roles: IDependable): void {}

  public metricClientConnections(options: PoolingMetricOptions = {}): cloudwatch.IMetric {
    const { role = EndpointRole.READ_WRITE, ...props } = options;
    return combinedMetric({ lines: this.endpointLines(role, 'ClientConnections', 'Sum', props), combine: 'SUM', label: `${role} client connections`, options: props });
  }

  public metricServerConnections(options: PoolingMetricOptions = {}): cloudwatch.IMetric {
    const { role = EndpointRole.READ_WRITE, ...props } = options;
    return this.targetRoleMetric('DatabaseConnections', role, props);
  }

  public metricConnectionBorrowLatency(options: PoolingMetricOptions = {}): cloudwatch.IMetric {
    const { role = EndpointRole.READ_WRITE, ...props } = options;
    return combinedMetric({ lines: this.endpointLines(role, 'DatabaseConnectionsBorrowLatency', 'Average', props), combine: 'MAX', factor: 0.001, label: `${role} borrow latency (ms)`, options: props });
  }

  public metricAvailability(options: PoolingMetricOptions = {}): cloudwatch.IMetric {
    const { role = EndpointRole.READ_WRITE, ...props } = options;
    return this.targetRoleMetric('AvailabilityPercentage', role, props);
  }

  /** @internal */
  public _dashboard(): TierDashboard {
    return proxyDashboardOf(this.attrs.proxyName, () => this.endpoints().map(({ name, role }) => ({ label: `${name} (${role})`, endpointName: name })));
  }

  private endpoints(): Array<{ name: string; role: EndpointRole }> {
    return [
      ...(this.attrs.readWriteEndpointNames ?? []).map((name) => ({ name, role: EndpointRole.READ_WRITE })),
      ...(this.attrs.readOnlyEndpointNames ?? []).map((name) => ({ name, role: EndpointRole.READ_ONLY })),
    ];
  }

  private targetRoleMetric(metricName: string, role: EndpointRole, props: cloudwatch.MetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: 'AWS/RDS',
      metricName,
      dimensionsMap: metricDimensions('proxy-target-role', { proxyName: this.attrs.proxyName, targetRole: role }),
      period: Duration.minutes(1),
      statistic: catalogMetric('proxy-target-role', metricName).statistics[0],
      ...props,
    });
  }

  private endpointLines(role: EndpointRole, metricName: string, statistic: string, props: cloudwatch.MetricOptions): cloudwatch.Metric[] {
    const names = [...(role === EndpointRole.READ_WRITE ? [DEFAULT_PROXY_ENDPOINT_NAME] : []), ...this.endpoints().filter((e) => e.role === role).map((e) => e.name)];
    throwIfInvalid(this, [names.length === 0 ? `${metricName} of role ${role}: the imported proxy has no ${role} endpoint: pass its names in readOnlyEndpointNames` : undefined]);
    return names.map((endpointName) =>
      new cloudwatch.Metric({
        namespace: 'AWS/RDS',
        metricName,
        dimensionsMap: metricDimensions('proxy-endpoint', { proxyName: this.attrs.proxyName, endpointName }),
        period: Duration.minutes(1),
        ...props,
        statistic: props.statistic ?? statistic,
      }),
    );
  }
}

/** A PgBouncer fleet of another stack or app (PgBouncerProxy.fromPgBouncerProxyAttributes): its transaction-pooling listeners. */
export class ImportedPgBouncerProxy extends ImportedTier implements IPoolingTier {
  public readonly engine: ProxyEngine = ProxyEngine.PGBOUNCER;
  /** None here: the read-only server role is made, and waited for, in the fleet's app. */
  public readonly serverRoles: DatabaseRoleSpec[] = [];
  public readonly fleetName: string;
  private readonly attrs: PgBouncerProxyAttributes;
  private readonly cluster: IAuroraOptimizedReads;
  private readonly secrets = new Map<string, secretsmanager.ISecret>();

  constructor(scope: Construct, id: string, attrs: PgBouncerProxyAttributes) {
    super(scope, id, attrs.poolSizing);
    throwIfInvalid(this, [
      Token.isUnresolved(attrs.hosts) || (Number.isInteger(attrs.hosts) && attrs.hosts > 0) ? undefined : `hosts ${attrs.hosts} is not a host count: pass the fleet's hosts (PgBouncerProxy.hosts), a whole number of at least 1`,
    ]);
    this.attrs = attrs;
    this.fleetName = attrs.fleetName;
    this.cluster = attrs.cluster;
  }

  /** Read access to `dbUser`'s password secret, which the fleet's app made (consumerPasswordSecretArns). */
  public grantConnect(grantee: iam.IGrantable, dbUser: string): iam.Grant {
    return this.secretOf(dbUser).grantRead(grantee);
  }

  public consumerPasswordSecret(dbUser: string): secretsmanager.ISecret | undefined {
    return this.secretOf(dbUser);
  }

  /** Refused: the hosts are the fleet's app's, and cannot wait for a resource of this one. */
  public waitForDatabaseRoles(_roles: IDependable): void {
    throwIfInvalid(this, [
      'an imported PgBouncerProxy\'s hosts cannot wait for database roles made in this app: make the roles its users log in as in the fleet\'s app (a DatabaseRoleBootstrap there with poolingTier), or drop poolingTier here and give each role its passwordSecretArn',
    ]);
  }

  /** The Target dimension of a listener's pools: the cluster (READ_WRITE), or each reader and then the writer (READ_ONLY). */
  public poolTargets(listener: EndpointRole): string[] {
    if (listener === EndpointRole.READ_WRITE) return [poolTargetOf(this.cluster.clusterEndpointHostname)];
    // An instance endpoint's first label is its identifier, which RDS keeps in lower case.
    return [...this.cluster.readerInstanceIdentifiers, this.cluster.writerInstanceIdentifier].map((id) => (Token.isUnresolved(id) ? id : id.toLowerCase()));
  }

  public metricClientConnections(options: PoolingMetricOptions = {}): cloudwatch.IMetric {
    return fleetPoolSignal('clientConnections', options, (role, metricName, props) => this.poolLines(role, metricName, props));
  }

  public metricServerConnections(options: PoolingMetricOptions = {}): cloudwatch.IMetric {
    return fleetPoolSignal('serverConnections', options, (role, metricName, props) => this.poolLines(role, metricName, props));
  }

  public metricConnectionBorrowLatency(options: PoolingMetricOptions = {}): cloudwatch.IMetric {
    return fleetPoolSignal('borrowLatency', options, (role, metricName, props) => this.poolLines(role, metricName, props));
  }

  public metricAvailability(options: PoolingMetricOptions = {}): cloudwatch.IMetric {
    const { role = EndpointRole.READ_WRITE, ...props } = options;
    const line = poolerMetric('pooler-target-group', 'HealthyHostCount', this.targetGroupSubject(role), { statistic: catalogMetric('pooler-target-group', 'HealthyHostCount').statistics[0], ...props });
    return combinedMetric({ lines: [line], combine: 'MIN', factor: 100 / this.attrs.hosts, label: `${role} hosts available (%)`, options: props });
  }

  /** @internal */
  public _dashboard(): TierDashboard {
    // An import charts the transaction listeners only: its attributes name no session listener's target groups.
    return fleetDashboardOf({ fleetName: this.fleetName, hosts: this.attrs.hosts, sessionRoles: [], poolTargets: (role) => this.poolTargets(role), targetGroupSubject: (role) => this.targetGroupSubject(role) });
  }

  private targetGroupSubject(role: EndpointRole) {
    return {
      loadBalancer: this.attrs.loadBalancerFullName,
      targetGroup: role === EndpointRole.READ_WRITE ? this.attrs.readWriteTargetGroupFullName : this.attrs.readOnlyTargetGroupFullName,
    };
  }

  private poolLines(role: EndpointRole, metricName: string, props: cloudwatch.MetricOptions): cloudwatch.Metric[] {
    return this.poolTargets(role).map((target) => fleetMetric(this, metricName, { ...props, listener: role, poolMode: PoolMode.TRANSACTION, target }, true));
  }

  private secretOf(dbUser: string): secretsmanager.ISecret {
    const arn = this.attrs.consumerPasswordSecretArns?.[dbUser];
    throwIfInvalid(this, [
      arn === undefined
        ? `dbUser ${JSON.stringify(dbUser)} has no password secret in consumerPasswordSecretArns (users: ${Object.keys(this.attrs.consumerPasswordSecretArns ?? {}).join(', ') || 'none'}): in the PgBouncerProxy's app, add the user (proxy.consumerPasswordSecret('${dbUser}'), and its role in the role bootstrap) and pass its secret's ARN here`
        : undefined,
    ]);
    if (!this.secrets.has(dbUser)) this.secrets.set(dbUser, secretsmanager.Secret.fromSecretCompleteArn(this, `Secret${this.secrets.size}`, arn!));
    return this.secrets.get(dbUser)!;
  }
}
