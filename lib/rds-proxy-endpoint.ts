import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as rds from 'aws-cdk-lib/aws-rds';
import { Construct } from 'constructs';
import { ENDPOINT_RULES, EndpointRole, POSTGRES_PORT, consumerEndpointTls, metricDimensions, runRules, securityGroupDescription } from './model';
import { ConsumerConnection, IProxyEndpoint, ProxyEngine } from './pooling-tier';
import { allowEndpointIngress } from './private/endpoint-ingress';
import { ImportedProxyEndpoint } from './private/imported-endpoint';
import { throwIfInvalid } from './private/validation';

/**
 * What an endpoint needs of its proxy. RdsProxy implements it; depending on this interface rather
 * than on RdsProxy keeps the endpoint free of the proxy's module, which creates endpoints.
 */
export interface IRdsProxy {
  /** The RDS Proxy the endpoint belongs to. */
  readonly proxy: rds.DatabaseProxy;
  /** The proxy's default endpoint host name: the name its wildcard certificate is issued for. */
  readonly defaultEndpoint: string;
  /** Grants IAM authentication through the proxy as `dbUser`. */
  grantConnect(grantee: iam.IGrantable, dbUser: string): iam.Grant;
}

/** Where and how to place an endpoint of an RdsProxy. */
export interface RdsProxyEndpointOptions {
  /** The VPC holding the endpoint; any VPC of the stack, e.g. a consumer or reporting VPC. */
  readonly vpc: ec2.IVpc;
  /**
   * Subnets of the endpoint (at least two Availability Zones).
   * @default - the VPC default strategy (private subnets, else isolated)
   */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /**
   * Name of the endpoint.
   * @default - a name CDK generates
   */
  readonly endpointName?: string;
}

/**
 * An RdsProxyEndpoint of another stack or app (RdsProxyEndpoint.fromRdsProxyEndpointAttributes):
 * the values its app exports, e.g. as stack outputs.
 */
export interface RdsProxyEndpointAttributes {
  /** READ_WRITE reaches the writer, READ_ONLY the readers. */
  readonly role: EndpointRole;
  /** The VPC the endpoint is in; its consumers go in it too. */
  readonly vpc: ec2.IVpc;
  /** The endpoint's DNS name. */
  readonly hostname: string;
  /** The endpoint's security group: each consumer is given ingress to it. */
  readonly securityGroupId: string;
  /** The ARN of the endpoint's RDS Proxy: `rds-db:connect` is scoped to it. */
  readonly proxyArn: string;
  /** The name of the endpoint's RDS Proxy. */
  readonly proxyName: string;
  /** The proxy's default endpoint host name, which a consumer checks the proxy's certificate against. */
  readonly proxyDefaultEndpoint: string;
}

/** Properties of an RdsProxyEndpoint. */
export interface RdsProxyEndpointProps extends RdsProxyEndpointOptions {
  readonly proxy: IRdsProxy;
  readonly role: EndpointRole;
}

/**
 * A READ_ONLY or READ_WRITE endpoint of an RdsProxy, in any VPC, with a security group of its own
 * (an endpoint without one would fall back to the VPC's default security group).
 */
export class RdsProxyEndpoint extends Construct implements IProxyEndpoint {
  public readonly engine = ProxyEngine.RDS_PROXY;
  public readonly endpoint: rds.DatabaseProxyEndpoint;
  /** RDS Proxy endpoints listen on PostgreSQL's port. */
  public readonly port = POSTGRES_PORT;
  public readonly role: EndpointRole;
  public readonly vpc: ec2.IVpc;
  /** Network access to the endpoint: grant it to each client. */
  public readonly connections: ec2.Connections;
  public readonly securityGroup: ec2.ISecurityGroup;
  private readonly proxy: IRdsProxy;

  /**
   * An endpoint of an RdsProxy of another stack or app, for consumers there: they connect through it and are
   * granted `rds-db:connect` and ingress as in one app. The proxy logs in to the cluster as each client's own
   * user (end-to-end IAM): in the proxy's app, let it log in as each consumer's user with
   * `RdsProxy.allowDatabaseUser`, which `grantConnect` there does for consumers of that app.
   */
  public static fromRdsProxyEndpointAttributes(scope: Construct, id: string, attrs: RdsProxyEndpointAttributes): IProxyEndpoint {
    // A scope of its own, so the proxy's and the endpoint's imports do not clash with the scope's other children.
    const holder = new Construct(scope, id);
    const proxy = rds.DatabaseProxy.fromDatabaseProxyAttributes(holder, 'Proxy', {
      dbProxyArn: attrs.proxyArn,
      dbProxyName: attrs.proxyName,
      endpoint: attrs.proxyDefaultEndpoint,
      securityGroups: [],
    });
    return new ImportedProxyEndpoint(holder, 'Endpoint', {
      engine: ProxyEngine.RDS_PROXY,
      role: attrs.role,
      vpc: attrs.vpc,
      hostname: attrs.hostname,
      port: POSTGRES_PORT,
      securityGroupId: attrs.securityGroupId,
      consumerConnection: () => ({ tlsServerName: consumerEndpointTls({ isProxyDefaultEndpoint: false, proxyDefaultEndpoint: attrs.proxyDefaultEndpoint }).serverName }),
      grantCredential: (grantee, dbUser) => proxy.grantConnect(grantee, dbUser),
    });
  }

  constructor(scope: Construct, id: string, props: RdsProxyEndpointProps) {
    super(scope, id);
    throwIfInvalid(this, runRules(ENDPOINT_RULES, { endpointName: props.endpointName }));
    this.role = props.role;
    this.vpc = props.vpc;
    this.proxy = props.proxy;

    this.securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: props.vpc,
      description: securityGroupDescription((p) => `${props.role} proxy endpoint ${p}: ingress only from granted clients`, this.node.path),
      allowAllOutbound: false,
    });
    this.connections = new ec2.Connections({
      securityGroups: [this.securityGroup],
      defaultPort: ec2.Port.tcp(POSTGRES_PORT),
    });

    this.endpoint = new rds.DatabaseProxyEndpoint(this, 'Endpoint', {
      dbProxy: props.proxy.proxy,
      dbProxyEndpointName: props.endpointName,
      vpc: props.vpc,
      vpcSubnets: props.vpcSubnets,
      securityGroups: [this.securityGroup],
      targetRole: props.role === 'READ_ONLY' ? rds.ProxyEndpointTargetRole.READ_ONLY : rds.ProxyEndpointTargetRole.READ_WRITE,
    });
  }

  /** The endpoint's DNS name. */
  public get hostname(): string {
    return this.endpoint.endpoint;
  }

  /**
   * The proxy's default endpoint host name. A consumer of this endpoint checks the proxy's certificate
   * against it: the certificate is a wildcard for the proxy's domain, which does not cover this endpoint's
   * own name (see LambdaConsumer).
   */
  public get proxyDefaultEndpoint(): string {
    return this.proxy.defaultEndpoint;
  }

  /** The endpoint's name, the EndpointName dimension of its metrics. */
  public get endpointName(): string {
    return this.endpoint.dbProxyEndpointName;
  }

  /**
   * IAM authentication, and the certificate checked against the proxy's default endpoint name: RDS
   * Proxy's wildcard certificate names the proxy's domain, which does not cover an endpoint created
   * beside the default one (rule consumer-tls-server-name).
   */
  public consumerConnection(_dbUser: string): ConsumerConnection {
    // An RdsProxyEndpoint is never the proxy's default endpoint.
    return { tlsServerName: consumerEndpointTls({ isProxyDefaultEndpoint: false, proxyDefaultEndpoint: this.proxyDefaultEndpoint }).serverName };
  }

  /**
   * Lets `consumer` connect through this endpoint as `dbUser`, in one call: `rds-db:connect` scoped to
   * the proxy and that user, and ingress to this endpoint's security group from the consumer's.
   */
  public grantConnect(consumer: iam.IGrantable & ec2.IConnectable, dbUser: string): iam.Grant {
    allowEndpointIngress(this.securityGroup, this.connections, this.port, consumer, `${this.role} clients`);
    return this.proxy.grantConnect(consumer, dbUser);
  }

  /** Any client-side AWS/RDS metric of this endpoint (ProxyName + EndpointName). */
  public metric(metricName: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: 'AWS/RDS',
      metricName,
      dimensionsMap: metricDimensions('proxy-endpoint', { proxyName: this.proxy.proxy.dbProxyName, endpointName: this.endpointName }),
      period: Duration.minutes(1),
      ...props,
    });
  }

  /** Client connections open on this endpoint (Sum). */
  public metricClientConnections(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('ClientConnections', { statistic: 'Sum', ...props });
  }

  /** Time to borrow a pooled connection through this endpoint (Average, microseconds). */
  public metricDatabaseConnectionsBorrowLatency(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('DatabaseConnectionsBorrowLatency', { statistic: 'Average', ...props });
  }

  /** Database response time seen through this endpoint (Average, microseconds). */
  public metricQueryDatabaseResponseLatency(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('QueryDatabaseResponseLatency', { statistic: 'Average', ...props });
  }
}
