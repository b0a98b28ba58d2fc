import { Duration, Lazy, Tags } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct, IDependable } from 'constructs';
import type { DatabaseRoleSpec } from '../lambda/src/role-bootstrap-request';
import { EndpointRole, PGBOUNCER_PROXY_RULES, PoolSettings, PoolSizing, evaluateRules, poolSizing, runRules } from './model';
import { renderPoolerBootstrap, sessionListenersValue } from './model/pgbouncer-bootstrap';
import { fleetListenerOf, type PoolerFleetSpec } from './model/pgbouncer-fleet';
import { FLEET_RULES } from './model/pgbouncer-fleet-rules';
import { PoolMode } from './model/pgbouncer-ini';
import { POOLER_HOST_RULES, poolerListenerPort } from './model/pgbouncer-hosts';
import { AuroraOptimizedReads } from './aurora-optimized-reads';
import { PgBouncerMetricOptions, fleetMetric, poolTargetOf, targetGroupMetric } from './pgbouncer-metric-options';
import { PgBouncerCertificate } from './pgbouncer-certificate';
import { IPgBouncerProxy, PgBouncerProxyEndpoint, PgBouncerProxyEndpointOptions } from './pgbouncer-proxy-endpoint';
import type { PgBouncerProxyAttributes } from './pgbouncer-proxy-attributes';
import type { PgBouncerProxyProps } from './pgbouncer-proxy-props';
import { IPoolingTier, IProxyEndpoint, PoolingMetricOptions, ProxyEndpointOptions, ProxyEngine } from './pooling-tier';
import { ImportedPgBouncerProxy } from './private/imported-tier';
import { fleetDashboard, fleetPoolLines, listenerModes } from './private/pgbouncer-fleet-metrics';
import { pgBouncerFleetSettings } from './private/pgbouncer-fleet-settings';
import { routePgBouncerHostApis } from './private/pgbouncer-host-apis';
import { addPgBouncerHostGroup } from './private/pgbouncer-host-group';
import { addPgBouncerListener, addPgBouncerLoadBalancer } from './private/pgbouncer-load-balancer';
import { newPgBouncerUserSecret } from './private/pgbouncer-user-secret';
import { kitSubnets } from './private/subnets';
import { combinedMetric, fleetPoolSignal, type TierDashboard } from './private/tier-dashboard';
import { throwIfInvalid } from './private/validation';

/**
 * A self-managed PgBouncer fleet in front of an AuroraOptimizedReads: an Auto Scaling group of fixed
 * size of Graviton hosts (Debian 13, IMDSv2 only, encrypted root volume, no public address, no SSH)
 * configured by the kit's bootstrap, behind an internal Network Load Balancer (read/write on 5432,
 * read-only on 5433) offered to consumer VPCs through a VPC endpoint service. Consumers log in with
 * passwords from the secrets `grantConnect` makes for their users (SCRAM pass-through to Aurora).
 */
export class PgBouncerProxy extends Construct implements IPgBouncerProxy, IPoolingTier {
  /**
   * A PgBouncerProxy of another stack or app, for consumers and a dashboard there: it grants the users' password
   * secrets (those in `consumerPasswordSecretArns`) and gives the shared metrics of its transaction listeners.
   * It cannot add endpoints (import them with PgBouncerProxyEndpoint.fromPgBouncerProxyEndpointAttributes), and
   * its hosts cannot wait for roles made outside its app (make them there).
   */
  public static fromPgBouncerProxyAttributes(scope: Construct, id: string, attrs: PgBouncerProxyAttributes): IPoolingTier {
    return new ImportedPgBouncerProxy(scope, id, attrs);
  }

  public readonly engine: ProxyEngine = ProxyEngine.PGBOUNCER;
  /** The Fleet dimension of the hosts' metrics. */
  public readonly fleetName: string;
  public readonly cluster: AuroraOptimizedReads;
  public readonly poolSettings: PoolSettings;
  /** Server connections the whole fleet may open per instance. */
  public readonly poolSizing: PoolSizing;
  public readonly instanceType: string;
  /** Hosts of the fleet: a fixed-size group (the dashboard's MissingHosts alarm compares the healthy hosts with it). */
  public readonly hosts: number;
  public readonly vcpusPerHost: number;
  /**
   * Where the hosts read their packages tar (`packages`) as `s3://<bucket>/<key>`, where to upload what `make pooler-packages` builds before they boot.
   *
   * A `CfnOutput` of it shows it after synth and deploy, for `aws s3 cp <tar> <url>`.
   */
  public readonly packagesUrl: string;
  /** The user data template (CloudFormation substitutes its `${Name}` placeholders). */
  public readonly userDataTemplate: string;
  public readonly autoScalingGroup: autoscaling.AutoScalingGroup;
  public readonly launchTemplate: ec2.LaunchTemplate;
  public readonly hostRole: iam.Role;
  /** Network access to the hosts (the load balancer reaches them; they reach the cluster). */
  public readonly connections: ec2.Connections;
  public readonly loadBalancer: elbv2.NetworkLoadBalancer;
  public readonly endpointService: ec2.IVpcEndpointService;
  public readonly loadBalancerAvailabilityZones: string[];
  /** The read-only listener's server role on Aurora (a role without write privileges). */
  public readonly readOnlyServerUser: string;
  /** The read-only listener's server role: `{"username", "password"}`. */
  public readonly readOnlyServerSecret: secretsmanager.Secret;
  /** The CA certificate (PEM) consumers verify the listeners against. */
  public readonly clientCaCertificate: string;
  /** The secret the hosts read the listeners' certificate from. */
  public readonly tlsSecret: secretsmanager.ISecret;
  /** The kit-managed certificate, when `tlsCertificate` is not given. */
  public readonly certificate?: PgBouncerCertificate;
  /** Share of each target's budget a session listener's pools take. */
  public readonly sessionMaxConnectionsPercent: number;
  private readonly consumerSecrets = new Map<string, secretsmanager.Secret>();
  /** The kit's Secrets Manager endpoint statement of the hosts (CREATE): consumers added later add their secrets to it. */
  private readonly hostSecretsStatement?: iam.PolicyStatement;
  private readonly targetGroups: Map<EndpointRole, elbv2.NetworkTargetGroup>;
  private readonly sessionTargetGroups = new Map<EndpointRole, elbv2.NetworkTargetGroup>();
  private readonly fleet: PoolerFleetSpec;
  private readonly balancer: ReturnType<typeof addPgBouncerLoadBalancer>;

  constructor(scope: Construct, id: string, props: PgBouncerProxyProps) {
    super(scope, id);
    const { pool, instanceType, serverUser, fleet, fleetName } = pgBouncerFleetSettings(this, props);
    // One fixed text for every fleet (the same in Terraform): the fleet's values are its placeholders.
    const template = renderPoolerBootstrap();
    this.cluster = props.cluster;
    this.poolSettings = pool;
    this.poolSizing = poolSizing(fleet.maxConnections, pool);
    this.instanceType = instanceType;
    this.hosts = fleet.hosts;
    this.vcpusPerHost = fleet.vcpusPerHost;
    this.packagesUrl = props.packages.bucket.s3UrlForObject(props.packages.key);
    this.userDataTemplate = template;
    this.fleetName = fleetName;
    this.fleet = fleet;
    this.sessionMaxConnectionsPercent = fleet.sessionMaxConnectionsPercent!;

    const vpc = props.cluster.cluster.vpc;
    const vpcSubnets = kitSubnets(this, vpc, props.vpcSubnets);
    this.loadBalancerAvailabilityZones = vpc.selectSubnets(vpcSubnets).availabilityZones;

    this.readOnlyServerUser = serverUser;
    this.readOnlyServerSecret = newPgBouncerUserSecret(this, 'ReadOnlyServerSecret', serverUser, 'the PgBouncer engine\'s read-only listener logs in to the readers as');

    const hosts = addPgBouncerHostGroup(this, {
      cluster: props.cluster,
      packages: props.packages,
      vpcSubnets,
      instanceType,
      imageId: props.imageId,
      fleet,
      fleetName,
      userDataTemplate: template,
      serverUser,
      serverSecret: this.readOnlyServerSecret,
      // Consumers added after construction are included: the list is produced at synth.
      consumerSecretArns: Lazy.string({ produce: () => [...this.consumerSecrets.values()].map((s) => s.secretArn).join(' ') }),
      // Known once the certificate is made for the endpoint service, below.
      tlsSecretArn: Lazy.string({ produce: () => this.tlsSecret.secretArn }),
      // Session listeners come with the endpoints that use them, which may be added after construction.
      sessionListeners: Lazy.string({ produce: () => sessionListenersValue(this.sessionRoles) }),
      s3PrefixListId: props.s3PrefixListId,
    });
    this.hostRole = hosts.hostRole;
    this.connections = hosts.connections;
    this.launchTemplate = hosts.launchTemplate;
    this.autoScalingGroup = hosts.autoScalingGroup;

    const balancer = addPgBouncerLoadBalancer(this, {
      vpc,
      vpcSubnets,
      hosts: this.autoScalingGroup,
      hostConnections: this.connections,
      tcpIdleTimeout: Duration.seconds(fleet.tcpIdleTimeoutSeconds),
    });
    this.loadBalancer = balancer.loadBalancer;
    this.balancer = balancer;
    this.targetGroups = new Map(balancer.targetGroups);
    this.endpointService = balancer.endpointService;

    // The listeners' certificate: the user's, or the kit CA's for the endpoint service's names.
    this.certificate = props.tlsCertificate === undefined ? new PgBouncerCertificate(this, 'Certificate', { endpointService: this.endpointService }) : undefined;
    this.tlsSecret = props.tlsCertificate?.secret ?? this.certificate!.secret;
    this.clientCaCertificate = props.tlsCertificate?.caCertificatePem ?? this.certificate!.caCertificatePem;
    this.tlsSecret.grantRead(this.hostRole);
    if (this.certificate !== undefined) {
      // Hosts read the secret at boot: issued first, and a re-issue is a new launch template version (the
      // serial tags the hosts), which the rolling update rolls out.
      this.autoScalingGroup.node.addDependency(this.certificate);
      Tags.of(this.launchTemplate).add('aurora-proxy-kit:listener-certificate-serial', this.certificate.certificateSerial);
    }

    this.hostSecretsStatement = routePgBouncerHostApis(this, { apiRoutes: props.apiRoutes, vpcEndpoints: props.vpcEndpoints, packages: props.packages, vpc, vpcSubnets });
  }

  /**
   * Adds a consumer user: a secret `{"username", "password"}` with a generated password, which the hosts
   * read (their auth file holds its SCRAM verifier). A user added after the proxy is constructed is
   * still in the hosts' user data of this deploy. The role on Aurora is made by the role bootstrap.
   * Each user is added once, and the hosts take at most 15 (`consumerUsers`: the rule pooler-consumer-users).
   * @deprecated use `grantConnect(grantee, username)` (IPoolingTier), or `consumerPasswordSecret(username)`,
   * which add the user on first use and, unlike this method, may be called again for the same user
   */
  public addConsumerUser(username: string): secretsmanager.Secret {
    throwIfInvalid(this, [
      ...runRules(POOLER_HOST_RULES, { consumerUser: username }),
      // The users the hosts would take with this one: each once, as many as their user data has room for.
      ...runRules(PGBOUNCER_PROXY_RULES, { consumerUsers: [...this.consumerSecrets.keys(), username] }),
    ]);
    const secret = newPgBouncerUserSecret(this, `Consumer-${username}`, username, 'a consumer of the PgBouncer engine logs in as');
    secret.grantRead(this.hostRole);
    this.hostSecretsStatement?.addResources(secret.secretArn);
    this.consumerSecrets.set(username, secret);
    return secret;
  }

  /** The password secret of consumer user `username`, added with addConsumerUser if it is not yet. */
  public consumerUserSecret(username: string): secretsmanager.ISecret {
    return this.consumerSecrets.get(username) ?? this.addConsumerUser(username);
  }

  /** The password secret of `dbUser`, added as a consumer user if it is not yet (IPoolingTier). */
  public consumerPasswordSecret(dbUser: string): secretsmanager.ISecret | undefined {
    return this.consumerUserSecret(dbUser);
  }

  /**
   * Gives `grantee` read access to `dbUser`'s password secret, adding the user to the hosts if it is not
   * yet. The network path is per endpoint: IProxyEndpoint.grantConnect gives the secret and ingress to the endpoint.
   */
  public grantConnect(grantee: iam.IGrantable, dbUser: string): iam.Grant {
    return this.consumerUserSecret(dbUser).grantRead(grantee);
  }

  /** The read-only listener's server role, with its password secret: the role bootstrap makes it (DatabaseRoleBootstrap's `poolingTier`). */
  public get serverRoles(): DatabaseRoleSpec[] {
    return [{ name: this.readOnlyServerUser, access: EndpointRole.READ_ONLY, passwordSecretArn: this.readOnlyServerSecret.secretArn }];
  }

  /** The hosts start once `roles` exist: their auth file and the roles' verifiers come from the same secrets. */
  public waitForDatabaseRoles(roles: IDependable): void {
    this.autoScalingGroup.node.defaultChild!.node.addDependency(roles);
  }

  /** Every user's password secret: the read-only server role's, then the consumers' added so far. */
  public get userSecrets(): secretsmanager.ISecret[] {
    return [this.readOnlyServerSecret, ...this.consumerSecrets.values()];
  }

  /** What the hosts read at boot and every 5 minutes: the users' secrets and the listeners' certificate. */
  public get hostSecrets(): secretsmanager.ISecret[] {
    return [...this.userSecrets, this.tlsSecret];
  }

  /** The consumer users added so far, with their password secrets. */
  public get consumerUsers(): string[] {
    return [...this.consumerSecrets.keys()];
  }

  /**
   * Adds a READ_ONLY endpoint (a PgBouncerProxyEndpoint) in a consumer VPC: an interface endpoint of the endpoint
   * service, to the read-only listener of `options.poolMode`. `endpointName` is refused: an interface endpoint has no name.
   */
  public addReadOnlyEndpoint(id: string, options: ProxyEndpointOptions): IProxyEndpoint {
    return this.newEndpoint(id, EndpointRole.READ_ONLY, options);
  }

  /** Adds a READ_WRITE endpoint (a PgBouncerProxyEndpoint) in a consumer VPC, to the read/write listener of `options.poolMode`. */
  public addReadWriteEndpoint(id: string, options: ProxyEndpointOptions): IProxyEndpoint {
    return this.newEndpoint(id, EndpointRole.READ_WRITE, options);
  }

  /**
   * Adds a READ_WRITE or READ_ONLY endpoint in a consumer VPC (an interface endpoint of the endpoint service).
   * @deprecated use addReadOnlyEndpoint or addReadWriteEndpoint (IPoolingTier), which take `vpcSubnets` for `subnets`
   */
  public addEndpoint(id: string, options: PgBouncerProxyEndpointOptions): PgBouncerProxyEndpoint {
    return new PgBouncerProxyEndpoint(this, id, { ...options, proxy: this });
  }

  private newEndpoint(id: string, role: EndpointRole, options: ProxyEndpointOptions): PgBouncerProxyEndpoint {
    throwIfInvalid(this, [
      options.endpointName === undefined
        ? undefined
        : `endpoint ${id}: endpointName ${options.endpointName} is RDS Proxy's; a PgBouncer endpoint is an interface VPC endpoint, which has no name: remove endpointName`,
    ]);
    return new PgBouncerProxyEndpoint(this, id, { vpc: options.vpc, role, subnets: options.vpcSubnets, poolMode: options.poolMode, proxy: this });
  }

  /**
   * The load balancer's target group of a listener's role, in transaction pooling, or in session pooling
   * (only once an endpoint of the role uses it: see `sessionRoles`).
   */
  public targetGroup(listener: EndpointRole, poolMode: PoolMode = PoolMode.TRANSACTION): elbv2.NetworkTargetGroup {
    const group = (poolMode === PoolMode.SESSION ? this.sessionTargetGroups : this.targetGroups).get(listener);
    throwIfInvalid(this, [group === undefined ? `no ${poolMode} pooling listener of role ${listener}: add an endpoint with role ${listener} and poolMode ${poolMode} first` : undefined]);
    return group!;
  }

  /** The roles with a session-pooling listener: those of the endpoints added with `poolMode: PoolMode.SESSION`. */
  public get sessionRoles(): EndpointRole[] {
    return [...this.sessionTargetGroups.keys()];
  }

  /**
   * The load balancer's port of the listener of `role` in `poolMode` (5432/5433, in session pooling 5434/5435).
   * The first endpoint in session pooling of a role adds its listener: the hosts' session processes, the load
   * balancer listener and target group, a share of each target's budget (`sessionMaxConnectionsPercent`).
   */
  public listenerPort(role: EndpointRole, poolMode: PoolMode): number {
    if (poolMode === PoolMode.SESSION && !this.sessionTargetGroups.has(role)) {
      const spec = { ...this.fleet, sessionRoles: [...this.sessionRoles, role] };
      throwIfInvalid(this, evaluateRules(FLEET_RULES, spec, (rule) => ({ ...rule.names, tcpIdleTimeoutSeconds: 'tcpIdleTimeout' })).map((v) => v.message));
      this.sessionTargetGroups.set(role, addPgBouncerListener({ ...this.balancer, hosts: this.autoScalingGroup, hostConnections: this.connections, tcpIdleTimeout: Duration.seconds(this.fleet.tcpIdleTimeoutSeconds) }, fleetListenerOf(role, poolMode)));
    }
    return poolerListenerPort(fleetListenerOf(role, poolMode));
  }

  /**
   * The Target dimension of a listener's pools: the first label of the cluster endpoint (READ_WRITE), or of each
   * reader's and then the writer instance's (READ_ONLY: after a failover a promoted reader's pools pool for it).
   */
  public poolTargets(listener: EndpointRole): string[] {
    const { clusterEndpoint, instanceEndpoints } = this.cluster.cluster;
    return (listener === EndpointRole.READ_WRITE ? [clusterEndpoint] : [...instanceEndpoints.slice(1), instanceEndpoints[0]!]).map((e) => poolTargetOf(e.hostname));
  }

  /** Any metric the hosts publish (AuroraProxyKit/PgBouncer), of one listener and pool target. */
  public metric(metricName: string, props?: PgBouncerMetricOptions): cloudwatch.Metric {
    return fleetMetric(this, metricName, props);
  }

  /**
   * Client connections open on the role's side (Sum of ClientConnections over the hosts, the role's listeners
   * and their pool targets). One listener's pool target: `metricPoolClientConnections`.
   */
  public metricClientConnections(options: PoolingMetricOptions = {}): cloudwatch.IMetric {
    return fleetPoolSignal('clientConnections', options, (role, metricName, props) => fleetPoolLines(this, role, metricName, props));
  }

  /**
   * Server connections held to the role's instances (Sum of ServerConnections over the hosts, the role's
   * listeners and their pool targets). One listener's pool target: `metricPoolServerConnections`.
   */
  public metricServerConnections(options: PoolingMetricOptions = {}): cloudwatch.IMetric {
    return fleetPoolSignal('serverConnections', options, (role, metricName, props) => fleetPoolLines(this, role, metricName, props));
  }

  /**
   * The longest a client of the role's side still waiting has waited for a server connection, in milliseconds
   * (MaxWait, Maximum over the hosts, listeners and pool targets, published in seconds).
   */
  public metricConnectionBorrowLatency(options: PoolingMetricOptions = {}): cloudwatch.IMetric {
    return fleetPoolSignal('borrowLatency', options, (role, metricName, props) => fleetPoolLines(this, role, metricName, props));
  }

  /**
   * Hosts passing the health checks of the role's listeners out of the fleet's hosts, in percent (the load
   * balancer's HealthyHostCount, Minimum, the fewest over the role's target groups).
   */
  public metricAvailability(options: PoolingMetricOptions = {}): cloudwatch.IMetric {
    const { role = EndpointRole.READ_WRITE, ...props } = options;
    const lines = listenerModes(this, role).map((mode) => targetGroupMetric(this.loadBalancer, this.targetGroup(role, mode), 'HealthyHostCount', props));
    return combinedMetric({ lines, combine: 'MIN', factor: 100 / this.hosts, label: `${role} hosts available (%)`, options: props });
  }

  /** Client connections open on one listener's pool target (Sum over the hosts). */
  public metricPoolClientConnections(props?: PgBouncerMetricOptions): cloudwatch.Metric {
    return fleetMetric(this, 'ClientConnections', props, true);
  }

  /** Server connections held open to one listener's pool target (Sum over the hosts). */
  public metricPoolServerConnections(props?: PgBouncerMetricOptions): cloudwatch.Metric {
    return fleetMetric(this, 'ServerConnections', props, true);
  }

  /** @internal */
  public _dashboard(): TierDashboard {
    return fleetDashboard(this);
  }

  /** Clients waiting for a server connection (Sum over the hosts). */
  public metricClientsWaiting(props?: PgBouncerMetricOptions): cloudwatch.Metric {
    return fleetMetric(this, 'ClientsWaiting', props, true);
  }

  /** The longest a waiting client has waited, in seconds (Maximum over the hosts). */
  public metricMaxWait(props?: PgBouncerMetricOptions): cloudwatch.Metric {
    return fleetMetric(this, 'MaxWait', props, true);
  }

  /** Transactions pooled (Sum over the hosts). */
  public metricTransactions(props?: PgBouncerMetricOptions): cloudwatch.Metric {
    return fleetMetric(this, 'Transactions', props, true);
  }

  /** Queries pooled (Sum over the hosts). */
  public metricQueries(props?: PgBouncerMetricOptions): cloudwatch.Metric {
    return fleetMetric(this, 'Queries', props, true);
  }

  /** Hosts passing a listener's health checks (AWS/NetworkELB, Minimum). */
  public metricHealthyHostCount(listener: EndpointRole, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return targetGroupMetric(this.loadBalancer, this.targetGroup(listener), 'HealthyHostCount', props);
  }

  /** Hosts failing a listener's health checks (AWS/NetworkELB, Maximum). */
  public metricUnHealthyHostCount(listener: EndpointRole, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return targetGroupMetric(this.loadBalancer, this.targetGroup(listener), 'UnHealthyHostCount', props);
  }
}
