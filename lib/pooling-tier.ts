import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { IConstruct } from 'constructs';
import { EndpointRole } from './model';

/** The engine of a pooling tier. */
export enum ProxyEngine {
  /** Amazon RDS Proxy (PoolingProxy): managed, IAM authentication end to end. */
  RDS_PROXY = 'RDS_PROXY',
  /** A self-managed PgBouncer fleet (PgBouncerProxy): SCRAM passwords from Secrets Manager. */
  PGBOUNCER = 'PGBOUNCER',
}

/** A pooling tier of either engine: what the dashboard charts. PoolingProxy and PgBouncerProxy implement it. */
export interface IPoolingTier extends IConstruct {
  /** Which engine this tier is. */
  readonly engine: ProxyEngine;
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
   * custom endpoints: the proxy's default endpoint, see DatabaseConsumerFunction).
   * @default - the endpoint's host name
   */
  readonly tlsServerName?: string;
}

/**
 * A READ_WRITE or READ_ONLY endpoint of either engine in a consumer VPC: what DatabaseConsumerFunction
 * needs to place, configure and authorize a consumer. PoolingProxyEndpoint and PgBouncerProxyEndpoint
 * implement it.
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
