import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { IConstruct, IDependable } from 'constructs';
import type { DatabaseRoleSpec } from '../lambda/src/role-bootstrap-request';
import { EndpointRole, type PoolSizing } from './model';
import { PoolMode } from './model/pgbouncer-ini';
import type { TierDashboard } from './private/tier-dashboard';

/** The engine of a pooling tier. */
export enum ProxyEngine {
  /** Amazon RDS Proxy (RdsProxy): managed, IAM authentication end to end. */
  RDS_PROXY = 'RDS_PROXY',
  /** A self-managed PgBouncer fleet (PgBouncerProxy): SCRAM passwords from Secrets Manager. */
  PGBOUNCER = 'PGBOUNCER',
}

/** Where to place an endpoint of a pooling tier of either engine (IPoolingTier.addReadOnlyEndpoint, addReadWriteEndpoint). */
export interface ProxyEndpointOptions {
  /** The VPC holding the endpoint, e.g. a consumer or reporting VPC; its consumers go in it too. */
  readonly vpc: ec2.IVpc;
  /**
   * Subnets of the endpoint (at least two Availability Zones; on the PgBouncer engine one per zone, in
   * zones of the fleet's Network Load Balancer).
   * @default - the VPC default strategy (private subnets, else isolated)
   */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /**
   * Name of the endpoint. RDS Proxy only (its endpoints are named resources, the EndpointName of their
   * metrics); the PgBouncer engine's endpoints are interface VPC endpoints, which have no name, and refuse it.
   * @default - a name CDK generates
   */
  readonly endpointName?: string;
  /**
   * How the endpoint's clients share server connections. PgBouncer engine only (see
   * PgBouncerProxyEndpointOptions.poolMode); RDS Proxy has no pool mode: it multiplexes transactions and
   * pins a session that uses session state, and refuses PoolMode.SESSION.
   * @default PoolMode.TRANSACTION
   */
  readonly poolMode?: PoolMode;
}

/** Which side of a pooling tier a named metric is of (IPoolingTier's metricXxx). */
export interface PoolingMetricOptions extends cloudwatch.MetricOptions {
  /**
   * The role: READ_WRITE (the writer's pools, and RDS Proxy's default endpoint) or READ_ONLY (the readers').
   * @default EndpointRole.READ_WRITE
   */
  readonly role?: EndpointRole;
}

/**
 * A pooling tier of either engine: what consumers, the role bootstrap and the dashboard use, so an app
 * switches engines by constructing the other class. RdsProxy (RDS Proxy) and PgBouncerProxy (a
 * PgBouncer fleet) implement it.
 *
 * What stays on the concrete classes, because the other engine has no counterpart: RDS Proxy's session
 * pinning and pool ceiling metrics, its per-endpoint metrics and endpoint names; the PgBouncer engine's pool
 * mode per endpoint, its per-listener and per-target metrics (clients waiting, transactions, queries), the
 * load balancer's healthy host counts, its hosts, packages and certificate.
 */
export interface IPoolingTier extends IConstruct {
  /** Which engine this tier is. */
  readonly engine: ProxyEngine;
  /** Server connections the tier may open per instance, from the cluster's default max_connections. */
  readonly poolSizing: PoolSizing;
  /**
   * The database roles the tier itself logs in as, for the role bootstrap to make: the PgBouncer engine's
   * read-only listener's server role; none on RDS Proxy, which logs in as each client's own user.
   */
  readonly serverRoles: DatabaseRoleSpec[];

  /** Adds a READ_ONLY endpoint in `options.vpc`; its clients reach the readers. */
  addReadOnlyEndpoint(id: string, options: ProxyEndpointOptions): IProxyEndpoint;

  /** Adds a READ_WRITE endpoint in `options.vpc`; its clients reach the writer. */
  addReadWriteEndpoint(id: string, options: ProxyEndpointOptions): IProxyEndpoint;

  /**
   * Gives `grantee` the credential to log in through this tier as `dbUser`: `rds-db:connect` for that user
   * (RDS Proxy), or read access to the user's password secret, which the tier makes and its hosts learn
   * (PgBouncer). The network path is per endpoint: IProxyEndpoint.grantConnect gives both.
   */
  grantConnect(grantee: iam.IGrantable, dbUser: string): iam.Grant;

  /**
   * The secret `{"username", "password"}` `dbUser` logs in with through this tier, made on first use
   * (PgBouncer); undefined where clients log in with IAM tokens (RDS Proxy).
   */
  consumerPasswordSecret(dbUser: string): secretsmanager.ISecret | undefined;

  /**
   * Makes what logs in as the tier's own roles (`serverRoles`, and the consumers' through it) wait for
   * `roles`, the resource that makes them: the PgBouncer hosts, whose auth file needs them; nothing on RDS
   * Proxy, which logs in on a client's behalf only when the client connects.
   */
  waitForDatabaseRoles(roles: IDependable): void;

  /**
   * Client connections open on the role's side (Sum): RDS Proxy's ClientConnections over the endpoints of
   * the role added so far (READ_WRITE includes the default endpoint); the fleet's ClientConnections over the
   * role's listeners and pool targets.
   */
  metricClientConnections(options?: PoolingMetricOptions): cloudwatch.IMetric;

  /**
   * Server connections the tier holds to the role's instances (Sum): RDS Proxy's DatabaseConnections of the
   * target role; the fleet's ServerConnections over the role's listeners and pool targets.
   */
  metricServerConnections(options?: PoolingMetricOptions): cloudwatch.IMetric;

  /**
   * How long clients wait for a server connection, in milliseconds: RDS Proxy's
   * DatabaseConnectionsBorrowLatency (Average, published in microseconds), the worst of the role's
   * endpoints added so far; the fleet's MaxWait (Maximum, published in seconds), the longest wait of a
   * client still waiting.
   */
  metricConnectionBorrowLatency(options?: PoolingMetricOptions): cloudwatch.IMetric;

  /**
   * Share of the role's side that was available, in percent: RDS Proxy's AvailabilityPercentage of the
   * target role (Minimum); the fleet's hosts passing the health checks of the role's listeners (the load
   * balancer's HealthyHostCount, Minimum) out of its hosts.
   */
  metricAvailability(options?: PoolingMetricOptions): cloudwatch.IMetric;

  /**
   * What a Dashboard charts of this tier: its sections and lines.
   * @internal
   */
  _dashboard(): TierDashboard;
}

/** How a consumer logs in through an endpoint and checks the endpoint's certificate. */
export interface ConsumerConnection {
  /**
   * The secret `{"username", "password"}` the consumer logs in with.
   * @default - an IAM authentication token (RDS Proxy)
   */
  readonly passwordSecret?: secretsmanager.ISecret;
  /**
   * The only CA (PEM) the endpoint's certificate may chain to, checked against the endpoint's host name.
   * @default - Amazon's public roots
   */
  readonly tlsCaCertificate?: string;
  /**
   * The name the endpoint's certificate is checked against instead of its host name (RDS Proxy's
   * custom endpoints: the proxy's default endpoint, see LambdaConsumer).
   * @default - the endpoint's host name
   */
  readonly tlsServerName?: string;
}

/**
 * A READ_WRITE or READ_ONLY endpoint of either engine in a consumer VPC: the connection details
 * LambdaConsumer needs to place, configure and authorize a consumer. RdsProxyEndpoint and
 * PgBouncerProxyEndpoint implement it; IPoolingTier.addReadOnlyEndpoint and addReadWriteEndpoint return it.
 */
export interface IProxyEndpoint extends IConstruct, ec2.IConnectable {
  /** The engine of the endpoint's pooling tier. */
  readonly engine: ProxyEngine;
  /** READ_WRITE reaches the writer, READ_ONLY the readers. */
  readonly role: EndpointRole;
  /** The VPC the endpoint is in; its consumers go in it too. */
  readonly vpc: ec2.IVpc;
  /** The host name consumers connect to. */
  readonly hostname: string;
  /** The port consumers connect to. */
  readonly port: number;
  /** The endpoint's own security group (ingress only from granted clients). */
  readonly securityGroup: ec2.ISecurityGroup;
  /** How `dbUser` logs in through this endpoint and checks its certificate. */
  consumerConnection(dbUser: string): ConsumerConnection;
  /**
   * Lets `consumer` connect through this endpoint as `dbUser`, in one call: the credential (IAM
   * `rds-db:connect`, or read access to the user's password secret) and ingress from the consumer.
   */
  grantConnect(consumer: iam.IGrantable & ec2.IConnectable, dbUser: string): iam.Grant;
}
