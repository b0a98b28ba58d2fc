import { Fn, Stack, Token } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { EndpointRole, PGBOUNCER_PROXY_RULES, runRules, securityGroupDescription } from './model';
import { PoolMode } from './model/pgbouncer-ini';
import { ConsumerConnection, IProxyEndpoint, ProxyEngine } from './pooling-tier';
import { allowEndpointIngress } from './private/endpoint-ingress';
import { ImportedProxyEndpoint } from './private/imported-endpoint';
import { throwIfInvalid } from './private/validation';

/**
 * What an endpoint needs of its PgBouncer proxy. PgBouncerProxy implements it; depending on this
 * interface rather than on PgBouncerProxy keeps the endpoint free of the proxy's module, which creates endpoints.
 */
export interface IPgBouncerProxy {
  /** The VPC endpoint service on the proxy's Network Load Balancer. */
  readonly endpointService: ec2.IVpcEndpointService;
  /** The Availability Zones of the Network Load Balancer's subnets (an interface endpoint must be in some of them). */
  readonly loadBalancerAvailabilityZones: string[];
  /** The CA certificate (PEM) the listeners' certificate chains to: consumers trust only it. */
  readonly clientCaCertificate: string;
  /** The password secret of consumer user `username`, added to the hosts' users if it is not yet. */
  consumerUserSecret(username: string): secretsmanager.ISecret;
  /**
   * The load balancer's port of the listener of `role` in `poolMode`, which the proxy adds if it has none yet
   * (a session listener exists only once an endpoint uses it).
   */
  listenerPort(role: EndpointRole, poolMode: PoolMode): number;
}

/** Where and for which role to place an endpoint of a PgBouncerProxy. */
export interface PgBouncerProxyEndpointOptions {
  /** The consumer VPC holding the interface endpoint; any VPC of the stack. */
  readonly vpc: ec2.IVpc;
  /** READ_WRITE (the listener on 5432, the writer) or READ_ONLY (5433, the readers). */
  readonly role: EndpointRole;
  /**
   * Subnets of the interface endpoint, one per Availability Zone. Their zones must be zones of the
   * proxy's Network Load Balancer: PrivateLink offers an endpoint service only in its load balancer's zones.
   * @default - the VPC default strategy (private subnets, else isolated), one per zone
   */
  readonly subnets?: ec2.SubnetSelection;
  /**
   * How the endpoint's clients share server connections. TRANSACTION lends one per transaction and resets it
   * after each (session state does not outlive a transaction). SESSION gives each client a server connection
   * for its whole session, for applications that need LISTEN, session advisory locks, temporary tables, SET
   * or cursors WITH HOLD across transactions: its own listener (read/write 5434, read-only 5435) whose pools
   * take the proxy's `sessionMaxConnectionsPercent` of each target's budget, one server connection per
   * connected client. RDS Proxy endpoints have no such choice (RDS Proxy pins a session instead).
   * @default PoolMode.TRANSACTION
   */
  readonly poolMode?: PoolMode;
}

/**
 * A PgBouncerProxyEndpoint of another stack or app (PgBouncerProxyEndpoint.fromPgBouncerProxyEndpointAttributes):
 * the values its app exports, e.g. as stack outputs.
 */
export interface PgBouncerProxyEndpointAttributes {
  /** READ_WRITE reaches the writer, READ_ONLY the readers. */
  readonly role: EndpointRole;
  /** The consumer VPC the interface endpoint is in; its consumers go in it too. */
  readonly vpc: ec2.IVpc;
  /** The endpoint's regional DNS name, which the listeners' certificate names. */
  readonly hostname: string;
  /** The listener's port (5432 read/write, 5433 read-only; in session pooling 5434, 5435). */
  readonly port: number;
  /** The endpoint's security group: each consumer is given ingress to it. */
  readonly securityGroupId: string;
  /** The CA certificate (PEM) the listeners' certificate chains to (PgBouncerProxy.clientCaCertificate). */
  readonly clientCaCertificate: string;
  /**
   * The complete ARN of the password secret of each user that connects through this import, by user name:
   * the secrets the proxy made for them in its app (PgBouncerProxy.consumerPasswordSecret), which its hosts know.
   */
  readonly consumerPasswordSecretArns: Record<string, string>;
}

/** Properties of a PgBouncerProxyEndpoint. */
export interface PgBouncerProxyEndpointProps extends PgBouncerProxyEndpointOptions {
  readonly proxy: IPgBouncerProxy;
}

/**
 * A READ_ONLY or READ_WRITE endpoint of a PgBouncerProxy in a consumer VPC: an interface VPC endpoint
 * of the proxy's endpoint service, with a security group of its own that admits no one until a client
 * is granted (`connections.allowDefaultPortFrom(client)`), and no egress (an endpoint only answers).
 */
export class PgBouncerProxyEndpoint extends Construct implements IProxyEndpoint {
  public readonly engine = ProxyEngine.PGBOUNCER;
  public readonly endpoint: ec2.InterfaceVpcEndpoint;
  public readonly role: EndpointRole;
  /** How its clients share server connections. */
  public readonly poolMode: PoolMode;
  public readonly vpc: ec2.IVpc;
  /** The port of the listener of the role and pool mode: 5432 read/write, 5433 read-only; in session pooling 5434, 5435. */
  public readonly port: number;
  public readonly securityGroup: ec2.ISecurityGroup;
  /** Network access to the endpoint on the role's port: grant it to each client. */
  public readonly connections: ec2.Connections;
  private readonly proxy: IPgBouncerProxy;

  /**
   * An endpoint of a PgBouncerProxy of another stack or app, for consumers there: they connect through it with
   * their password secret and are granted its read and ingress as in one app. The hosts know only the users the
   * proxy's app added (PgBouncerProxy.consumerPasswordSecret, or the role bootstrap's roles): a user without a
   * secret in `consumerPasswordSecretArns` is refused at synth.
   */
  public static fromPgBouncerProxyEndpointAttributes(scope: Construct, id: string, attrs: PgBouncerProxyEndpointAttributes): IProxyEndpoint {
    const holder = new Construct(scope, id);
    const secrets = new Map<string, secretsmanager.ISecret>();
    const secretOf = (dbUser: string): secretsmanager.ISecret => {
      const arn = attrs.consumerPasswordSecretArns[dbUser];
      throwIfInvalid(holder, [
        arn === undefined
          ? `dbUser ${JSON.stringify(dbUser)} has no password secret in consumerPasswordSecretArns (users: ${Object.keys(attrs.consumerPasswordSecretArns).join(', ') || 'none'}): in the PgBouncerProxy's app, add the user (proxy.consumerPasswordSecret('${dbUser}'), and its role in the role bootstrap) and pass its secret's ARN here`
          : undefined,
      ]);
      if (!secrets.has(dbUser)) secrets.set(dbUser, secretsmanager.Secret.fromSecretCompleteArn(holder, `Secret${secrets.size}`, arn!));
      return secrets.get(dbUser)!;
    };
    return new ImportedProxyEndpoint(holder, 'Endpoint', {
      engine: ProxyEngine.PGBOUNCER,
      role: attrs.role,
      vpc: attrs.vpc,
      hostname: attrs.hostname,
      port: attrs.port,
      securityGroupId: attrs.securityGroupId,
      consumerConnection: (dbUser) => ({ passwordSecret: secretOf(dbUser), tlsCaCertificate: attrs.clientCaCertificate }),
      grantCredential: (grantee, dbUser) => secretOf(dbUser).grantRead(grantee),
    });
  }

  constructor(scope: Construct, id: string, props: PgBouncerProxyEndpointProps) {
    super(scope, id);
    this.role = props.role;
    this.vpc = props.vpc;
    this.poolMode = props.poolMode ?? PoolMode.TRANSACTION;
    this.proxy = props.proxy;
    const subnets: ec2.SubnetSelection = { ...props.subnets, onePerAz: true };
    throwIfInvalid(this, [
      zonesOutsideLoadBalancer(this, props.vpc.selectSubnets(subnets).availabilityZones, props.proxy.loadBalancerAvailabilityZones),
      // JavaScript callers and jsii's other languages can pass any string.
      ...runRules(PGBOUNCER_PROXY_RULES, { poolMode: this.poolMode }),
    ]);
    this.port = props.proxy.listenerPort(props.role, this.poolMode);

    this.securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: props.vpc,
      // The transaction endpoints' description is as before session pooling existed: a new one replaces the group.
      description: securityGroupDescription((p) => `${props.role} PgBouncer endpoint ${p}${this.poolMode === PoolMode.SESSION ? ' (session pooling)' : ''}: ingress only from granted clients`, this.node.path),
      allowAllOutbound: false,
    });
    this.connections = new ec2.Connections({ securityGroups: [this.securityGroup], defaultPort: ec2.Port.tcp(this.port) });
    this.endpoint = new ec2.InterfaceVpcEndpoint(this, 'Endpoint', {
      vpc: props.vpc,
      service: new ec2.InterfaceVpcEndpointService(props.proxy.endpointService.vpcEndpointServiceName, this.port),
      subnets,
      securityGroups: [this.securityGroup],
      // No ingress from the whole VPC (CDK's `open`): clients are granted one by one.
      open: false,
      privateDnsEnabled: false,
    });
    // The service's permissions (this account) must exist before the endpoint asks to connect.
    this.endpoint.node.addDependency(props.proxy.endpointService);
  }

  /**
   * The endpoint's regional DNS name (the first of its DNS entries, `<hosted zone>:<name>`),
   * `vpce-<id>.vpce-svc-<id>.<region>.vpce.amazonaws.com`, which the listeners' certificate names.
   */
  public get hostname(): string {
    return Fn.select(1, Fn.split(':', Fn.select(0, this.endpoint.vpcEndpointDnsEntries)));
  }

  /** A SCRAM password from the user's secret, and the listeners' certificate checked against the proxy's CA only. */
  public consumerConnection(dbUser: string): ConsumerConnection {
    return { passwordSecret: this.proxy.consumerUserSecret(dbUser), tlsCaCertificate: this.proxy.clientCaCertificate };
  }

  /**
   * Lets `consumer` connect through this endpoint as `dbUser`, in one call: read access to the user's
   * password secret (the user is added to the hosts if it is not yet) and ingress to this endpoint.
   */
  public grantConnect(consumer: iam.IGrantable & ec2.IConnectable, dbUser: string): iam.Grant {
    allowEndpointIngress(this.securityGroup, this.connections, this.port, consumer, `${this.role} clients`);
    return this.proxy.consumerUserSecret(dbUser).grantRead(consumer);
  }
}

/** A message when some of `zones` are not zones of the load balancer (compared resolved, so tokens compare too). */
function zonesOutsideLoadBalancer(scope: Construct, zones: string[], loadBalancerZones: string[]): string | undefined {
  const stack = Stack.of(scope);
  const show = (az: string) => (Token.isUnresolved(az) ? JSON.stringify(stack.resolve(az)) : az);
  const known = new Set(loadBalancerZones.map(show));
  const outside = zones.map(show).filter((az) => !known.has(az));
  if (outside.length === 0) return undefined;
  return `subnets in ${outside.join(', ')} are outside the Network Load Balancer's Availability Zones (${[...known].join(', ')}): PrivateLink offers the endpoint service only in those; select subnets in them`;
}
