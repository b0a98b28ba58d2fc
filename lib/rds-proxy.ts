import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as rds from 'aws-cdk-lib/aws-rds';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct, IDependable } from 'constructs';
import type { DatabaseRoleSpec } from '../lambda/src/role-bootstrap-request';
import {
  DEFAULT_POOL_SETTINGS,
  DEFAULT_PROXY_ENDPOINT_NAME,
  EndpointRole,
  PROXY_RULES,
  PoolSettings,
  POSTGRES_PORT,
  PoolSizing,
  catalogMetric,
  metricDimensions,
  poolSizing,
  proxyPoolSettings,
  runRules,
  securityGroupDescription,
} from './model';
import { PoolMode } from './model/pgbouncer-ini';
import { AuroraOptimizedReads } from './aurora-optimized-reads';
import { IRdsProxy, RdsProxyEndpoint, RdsProxyEndpointOptions } from './rds-proxy-endpoint';
import { IPoolingTier, IProxyEndpoint, PoolingMetricOptions, ProxyEndpointOptions, ProxyEngine } from './pooling-tier';
import { kitSubnets } from './private/subnets';
import type { RdsProxyAttributes } from './rds-proxy-attributes';
import { ImportedRdsProxy } from './private/imported-tier';
import { combinedMetric, proxyDashboardOf, type TierDashboard } from './private/tier-dashboard';
import { throwIfInvalid } from './private/validation';

/** Properties of an RdsProxy. */
export interface RdsProxyProps {
  /** The cluster the proxy pools connections to. */
  readonly cluster: AuroraOptimizedReads;
  /**
   * Subnets of the proxy's default endpoint, in the cluster's VPC.
   * @default - the VPC's isolated subnets
   */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /**
   * Name of the proxy.
   * @default - a name CDK generates
   */
  readonly proxyName?: string;
  /**
   * Share of each target's max_connections the proxy may open (bounds: the kit's `max-connections-percent` rule). The proxy is given at most the
   * share that leaves the connections the kit reserves (RESERVED_CONNECTIONS): 99 on every catalog class.
   * @default 100
   */
  readonly maxConnectionsPercent?: number;
  /**
   * Share of max_connections kept open while idle (0..maxConnectionsPercent).
   * @default 5
   */
  readonly maxIdleConnectionsPercent?: number;
  /**
   * How long a client waits to borrow a pooled connection (bounds: the kit's `borrow-timeout` rule; a value
   * outside them fails synth with the range).
   * @default Duration.seconds(120)
   */
  readonly connectionBorrowTimeout?: Duration;
  /**
   * How long an idle client connection stays open (1 s..8 h).
   * @default Duration.minutes(30)
   */
  readonly idleClientTimeout?: Duration;
  /**
   * Session pinning filters. RDS Proxy supports none for PostgreSQL; any value is rejected with a
   * message. The prop exists so a configuration ported from MySQL fails loudly instead of silently.
   * @default - none
   */
  readonly sessionPinningFilters?: rds.SessionPinningFilter[];
  /**
   * Log SQL statements the proxy sees (may log sensitive data; for debugging only).
   * @default false
   */
  readonly debugLogging?: boolean;
}


/**
 * An RDS Proxy in front of an AuroraOptimizedReads: TLS required, end-to-end IAM authentication
 * (clients and the proxy itself log in with IAM tokens, as each client's own database user; no secret), its own security group, and database ingress only
 * from the proxy. Endpoints (READ_ONLY or READ_WRITE) can be added in any VPC of the stack, each with
 * its own security group, up to RDS Proxy's limit of 20.
 */
export class RdsProxy extends Construct implements IRdsProxy, IPoolingTier {
  /** The kit's pool defaults: RDS Proxy's own default for maxConnectionsPercent, a 5% idle floor, a 120 s borrow timeout. */
  public static readonly DEFAULT_POOL_SETTINGS: PoolSettings = DEFAULT_POOL_SETTINGS;

  /**
   * An RdsProxy of another stack or app, for consumers, a role bootstrap and a dashboard there: it grants
   * `rds-db:connect` and gives the shared metrics. It cannot add endpoints (import them with
   * RdsProxyEndpoint.fromRdsProxyEndpointAttributes), and the proxy's own login as each user is its
   * app's (RdsProxy.allowDatabaseUser).
   */
  public static fromRdsProxyAttributes(scope: Construct, id: string, attrs: RdsProxyAttributes): IPoolingTier {
    return new ImportedRdsProxy(scope, id, attrs);
  }

  public readonly engine: ProxyEngine = ProxyEngine.RDS_PROXY;

  public readonly proxy: rds.DatabaseProxy;
  /** Network access to the proxy's default endpoint. */
  public readonly connections: ec2.Connections;
  public readonly cluster: AuroraOptimizedReads;
  public readonly poolSettings: PoolSettings;
  /** Server connections the pool may open per instance, from the cluster's default max_connections. */
  public readonly poolSizing: PoolSizing;
  /** None: RDS Proxy logs in as each client's own user (end-to-end IAM authentication), with no role of its own. */
  public readonly serverRoles: DatabaseRoleSpec[] = [];
  /** The role RDS Proxy assumes; it may log in to the cluster as each user granted through the proxy. */
  public readonly role: iam.Role;
  private readonly endpointList: RdsProxyEndpoint[] = [];
  private readonly databaseUsers = new Set<string>();

  constructor(scope: Construct, id: string, props: RdsProxyProps) {
    super(scope, id);

    const pool: PoolSettings = {
      maxConnectionsPercent: props.maxConnectionsPercent ?? DEFAULT_POOL_SETTINGS.maxConnectionsPercent,
      maxIdleConnectionsPercent: props.maxIdleConnectionsPercent ?? DEFAULT_POOL_SETTINGS.maxIdleConnectionsPercent,
      connectionBorrowTimeoutSeconds:
        props.connectionBorrowTimeout?.toSeconds() ?? DEFAULT_POOL_SETTINGS.connectionBorrowTimeoutSeconds,
    };
    const idleClientTimeout = props.idleClientTimeout ?? Duration.minutes(30);
    throwIfInvalid(
      this,
      runRules(PROXY_RULES, {
        ...pool,
        proxyName: props.proxyName,
        idleClientTimeoutSeconds: idleClientTimeout.toSeconds(),
        sessionPinningFilters: props.sessionPinningFilters?.map((f) => f.filterName),
      }),
    );
    // What the proxy is given: the settings with MaxConnectionsPercent kept below the reserve.
    this.poolSettings = proxyPoolSettings(props.cluster.sizing.maxConnections, pool);
    this.poolSizing = poolSizing(props.cluster.sizing.maxConnections, this.poolSettings);
    this.cluster = props.cluster;

    const securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: props.cluster.cluster.vpc,
      description: securityGroupDescription((p) => `RDS Proxy ${p}: clients of the default endpoint`, this.node.path),
      allowAllOutbound: false,
    });

    // End-to-end IAM authentication: clients log in with IAM tokens, and so does the proxy to the
    // database, as each client's own user; no secret is read (the role below needs rds-db:connect).
    this.role = new iam.Role(this, 'Role', { assumedBy: new iam.ServicePrincipal('rds.amazonaws.com') });
    this.proxy = new rds.DatabaseProxy(this, 'Proxy', {
      proxyTarget: rds.ProxyTarget.fromCluster(props.cluster.cluster),
      dbProxyName: props.proxyName,
      defaultAuthScheme: rds.DefaultAuthScheme.IAM_AUTH,
      role: this.role,
      vpc: props.cluster.cluster.vpc,
      vpcSubnets: kitSubnets(this, props.cluster.cluster.vpc, props.vpcSubnets),
      securityGroups: [securityGroup],
      requireTLS: true,
      maxConnectionsPercent: this.poolSettings.maxConnectionsPercent,
      maxIdleConnectionsPercent: this.poolSettings.maxIdleConnectionsPercent,
      borrowTimeout: Duration.seconds(pool.connectionBorrowTimeoutSeconds),
      idleClientTimeout,
      debugLogging: props.debugLogging ?? false,
    });
    this.connections = new ec2.Connections({
      securityGroups: [securityGroup],
      defaultPort: ec2.Port.tcp(POSTGRES_PORT),
    });
    // The proxy's path to the cluster (ingress on the cluster's group, egress on the proxy's, on the
    // cluster port) is added by ProxyTarget.fromCluster when the proxy binds it. A second rule of our own
    // would render the same permission under another id (a literal port against CDK's Endpoint.Port
    // token, aws/aws-cdk#24305), and removing either later would revoke the one in force.
  }

  /** The proxy's default endpoint host name: the name its wildcard certificate is issued for. */
  public get defaultEndpoint(): string {
    return this.proxy.endpoint;
  }

  /** The endpoints added so far, in order. */
  public get endpoints(): RdsProxyEndpoint[] {
    return [...this.endpointList];
  }

  /**
   * Adds a READ_ONLY endpoint (an RdsProxyEndpoint) in any VPC of the stack; reads spread over the readers.
   * RDS Proxy endpoints have no pool mode (`poolMode: PoolMode.SESSION` is refused): RDS Proxy multiplexes
   * transactions and pins a client's session to a server connection when it uses session state (Aurora User
   * Guide, rds-proxy-pinning). The endpoint's own metrics and name: `endpoints`, or cast to RdsProxyEndpoint.
   */
  public addReadOnlyEndpoint(id: string, options: ProxyEndpointOptions): IProxyEndpoint {
    return this.addEndpoint(id, EndpointRole.READ_ONLY, options);
  }

  /** Adds a READ_WRITE endpoint (an RdsProxyEndpoint) in any VPC of the stack; it reaches the writer. */
  public addReadWriteEndpoint(id: string, options: ProxyEndpointOptions): IProxyEndpoint {
    return this.addEndpoint(id, EndpointRole.READ_WRITE, options);
  }

  /**
   * Grants IAM authentication through the proxy as `dbUser` (`rds-db:connect` on this proxy and user),
   * and lets the proxy log in to the cluster as that user. Network access is granted per endpoint
   * (RdsProxyEndpoint.grantConnect).
   */
  public grantConnect(grantee: iam.IGrantable, dbUser: string): iam.Grant {
    this.allowDatabaseUser(dbUser);
    return this.proxy.grantConnect(grantee, dbUser);
  }

  /**
   * Lets the proxy log in to the cluster as `dbUser` (`rds-db:connect` on the cluster for its role): the proxy's
   * side of `grantConnect`, for a user whose consumers are in another app and import an endpoint
   * (RdsProxyEndpoint.fromRdsProxyEndpointAttributes).
   */
  public allowDatabaseUser(dbUser: string): void {
    if (this.databaseUsers.has(dbUser)) return;
    this.databaseUsers.add(dbUser);
    // The cluster's database user ARN: rds-db:<region>:<account>:dbuser:<cluster resource id>/<user>.
    const userArn = Stack.of(this).formatArn({
      service: 'rds-db',
      resource: 'dbuser',
      resourceName: `${this.cluster.cluster.clusterResourceIdentifier}/${dbUser}`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['rds-db:connect'], resources: [userArn] }));
  }

  /** Undefined: clients of RDS Proxy log in with IAM authentication tokens, not passwords. */
  public consumerPasswordSecret(_dbUser: string): secretsmanager.ISecret | undefined {
    return undefined;
  }

  /** Nothing waits: RDS Proxy logs in as a client's user only when that client connects. */
  public waitForDatabaseRoles(_roles: IDependable): void {}

  /** Any AWS/RDS metric of this proxy, with extra dimensions. */
  public metric(metricName: string, dimensions: Record<string, string> = {}, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: 'AWS/RDS',
      metricName,
      dimensionsMap: { ProxyName: this.proxy.dbProxyName, ...dimensions },
      period: Duration.minutes(1),
      ...props,
    });
  }

  /** A database-side metric of one target role (RDS Proxy does not split these per endpoint). */
  public metricForTargetRole(metricName: string, role: EndpointRole, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: 'AWS/RDS',
      metricName,
      dimensionsMap: metricDimensions('proxy-target-role', { proxyName: this.proxy.dbProxyName, targetRole: role }),
      period: Duration.minutes(1),
      ...props,
    });
  }

  /** A catalog metric of one target role, at the catalog's statistic. */
  private catalogMetricForTargetRole(metricName: string, role: EndpointRole, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metricForTargetRole(metricName, role, { statistic: catalogMetric('proxy-target-role', metricName).statistics[0], ...props });
  }

  /** Server connections held for one target role (Sum). */
  public metricDatabaseConnections(role: EndpointRole, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.catalogMetricForTargetRole('DatabaseConnections', role, props);
  }

  /** Server connections pinned to a client session, for one target role (Sum). */
  public metricDatabaseConnectionsCurrentlySessionPinned(role: EndpointRole, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.catalogMetricForTargetRole('DatabaseConnectionsCurrentlySessionPinned', role, props);
  }

  /** The pool ceiling for one target role (Sum: RDS Proxy publishes it per proxy host). */
  public metricMaxDatabaseConnectionsAllowed(role: EndpointRole, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.catalogMetricForTargetRole('MaxDatabaseConnectionsAllowed', role, props);
  }

  /** Share of time a target role was available (Minimum). */
  public metricAvailabilityPercentage(role: EndpointRole, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.catalogMetricForTargetRole('AvailabilityPercentage', role, props);
  }

  /**
   * Client connections open on the role's side (Sum of ClientConnections): over the endpoints of the role added
   * so far, READ_WRITE with the default endpoint. RDS Proxy publishes it per proxy or per endpoint, not per role.
   */
  public metricClientConnections(options: PoolingMetricOptions = {}): cloudwatch.IMetric {
    const { role = EndpointRole.READ_WRITE, ...props } = options;
    return combinedMetric({ lines: this.endpointLines(role, 'ClientConnections', 'Sum', props), combine: 'SUM', label: `${role} client connections`, options: props });
  }

  /** Server connections held for the role's instances (DatabaseConnections of the target role, Sum). */
  public metricServerConnections(options: PoolingMetricOptions = {}): cloudwatch.IMetric {
    const { role = EndpointRole.READ_WRITE, ...props } = options;
    return this.metricDatabaseConnections(role, props);
  }

  /**
   * Time to borrow a pooled connection, in milliseconds: DatabaseConnectionsBorrowLatency (Average, published in
   * microseconds) of the role's endpoints added so far, the worst of them.
   */
  public metricConnectionBorrowLatency(options: PoolingMetricOptions = {}): cloudwatch.IMetric {
    const { role = EndpointRole.READ_WRITE, ...props } = options;
    return combinedMetric({ lines: this.endpointLines(role, 'DatabaseConnectionsBorrowLatency', 'Average', props), combine: 'MAX', factor: 0.001, label: `${role} borrow latency (ms)`, options: props });
  }

  /** Share of time the role's target was available, in percent (AvailabilityPercentage, Minimum). */
  public metricAvailability(options: PoolingMetricOptions = {}): cloudwatch.IMetric {
    const { role = EndpointRole.READ_WRITE, ...props } = options;
    return this.metricAvailabilityPercentage(role, props);
  }

  /** A client-side metric of each endpoint of `role` added so far (READ_WRITE: the default endpoint first). */
  private endpointLines(role: EndpointRole, metricName: string, statistic: string, props: cloudwatch.MetricOptions): cloudwatch.Metric[] {
    const names = [...(role === EndpointRole.READ_WRITE ? [DEFAULT_PROXY_ENDPOINT_NAME] : []), ...this.endpointList.filter((e) => e.role === role).map((e) => e.endpointName)];
    throwIfInvalid(this, [names.length === 0 ? `${metricName} of role ${role}: the proxy has no ${role} endpoint yet; add one with addReadOnlyEndpoint before asking for its metrics` : undefined]);
    return names.map((endpointName) =>
      this.metric(metricName, {}, { ...props, statistic: props.statistic ?? statistic, dimensionsMap: metricDimensions('proxy-endpoint', { proxyName: this.proxy.dbProxyName, endpointName }) }),
    );
  }

  /** @internal */
  public _dashboard(): TierDashboard {
    return proxyDashboardOf(this.proxy.dbProxyName, () => this.endpointList.map((e) => ({ label: `${e.node.id} (${e.role})`, endpointName: e.endpointName })));
  }

  private addEndpoint(id: string, role: EndpointRole, options: ProxyEndpointOptions): RdsProxyEndpoint {
    throwIfInvalid(this, [
      ...runRules(PROXY_RULES, { endpoints: this.endpointList.length + 1, readers: this.cluster.readerInstanceIdentifiers.length, targetRole: role }),
      options.poolMode === PoolMode.SESSION
        ? `endpoint ${id}: poolMode ${options.poolMode} is the PgBouncer engine's; RDS Proxy endpoints have no pool mode (RDS Proxy pins a client's session to a server connection when it uses session state): remove poolMode, or use a PgBouncerProxy`
        : undefined,
    ]);
    const endpointOptions: RdsProxyEndpointOptions = { vpc: options.vpc, vpcSubnets: options.vpcSubnets, endpointName: options.endpointName };
    const endpoint = new RdsProxyEndpoint(this, id, { ...endpointOptions, proxy: this, role });
    // The target group waits for every instance of the cluster (aws-cdk-lib adds those dependencies);
    // an endpoint created before its targets are registered would have nothing to route to.
    endpoint.endpoint.node.addDependency(this.proxy.node.findChild('ProxyTargetGroup'));
    this.endpointList.push(endpoint);
    return endpoint;
  }
}
