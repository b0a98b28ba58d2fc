import { Aws, Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { EndpointRole, GATEWAY_ENDPOINT_PRINCIPAL_KEY, KMS_DELETION_WINDOW_DAYS } from '../model';
import { POOLER_METRICS_NAMESPACE } from '../model/pgbouncer-metrics';
import { FLEET_SIGNAL_POLICY } from '../model/pgbouncer-rollout';
import { OptimizedReadsCluster } from '../optimized-reads-cluster';
import { PgBouncerProxy } from '../pgbouncer-proxy';
import { PgBouncerProxyEndpoint } from '../pgbouncer-proxy-endpoint';
import { skipCheckov } from '../private/checkov';

/** Where the reference deployment expects the hosts' packages tar (PgBouncerPackages: the Debian 13 arm64 packages, the SSM Agent's among them, SHA256SUMS, the RDS CA bundle). */
export const POOLER_PACKAGES_KEY = 'pgbouncer/debian-13-arm64.tar';

/**
 * The S3 objects the hosts read through the data VPC's gateway endpoint, as keys of the packages bucket:
 * the packages tar. AWS's SSM agent package, when the hosts install it, goes into that same tar; another
 * object (or key prefix, `prefix/*`) the hosts read would be another key here.
 */
const HOST_OBJECT_KEYS: ReadonlyArray<string> = [POOLER_PACKAGES_KEY];

/** The AWS services the pooler hosts call, each through an interface endpoint of the data VPC. */
const HOST_SERVICES: ReadonlyArray<[string, ec2.InterfaceVpcEndpointAwsService, string]> = [
  // Session Manager (shell access without SSH): the agent's three services.
  ['Ssm', ec2.InterfaceVpcEndpointAwsService.SSM, 'Session Manager'],
  ['SsmMessages', ec2.InterfaceVpcEndpointAwsService.SSM_MESSAGES, 'Session Manager'],
  ['Ec2Messages', ec2.InterfaceVpcEndpointAwsService.EC2_MESSAGES, 'Session Manager'],
  // The exporter's PutMetricData.
  ['Monitoring', ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_MONITORING, 'the metrics exporter'],
  // Each new host's SignalResource: the stack's creation and rolling updates wait for it (pgbouncer-rollout.ts).
  ['CloudFormation', ec2.InterfaceVpcEndpointAwsService.CLOUDFORMATION, 'SignalResource of new hosts'],
];

export interface PgBouncerTierProps {
  readonly cluster: OptimizedReadsCluster;
  readonly dataVpc: ec2.Vpc;
  readonly consumerVpc: ec2.Vpc;
  readonly maxConnectionsPercent?: number;
  /** READ_ONLY endpoints in the consumer VPC. */
  readonly readOnlyEndpoints: number;
}

/**
 * The reference deployment's PgBouncer engine: the fleet in the data VPC with the endpoints its hosts
 * need (the data VPC has no NAT: S3 for the packages, Secrets Manager, Session Manager, CloudWatch), a
 * bucket for the packages, and the read/write and read-only endpoints in the consumer VPC with the
 * Secrets Manager endpoint its consumers read their passwords through.
 */
export class PgBouncerTier extends Construct {
  public readonly proxy: PgBouncerProxy;
  public readonly readOnlyEndpoint: PgBouncerProxyEndpoint;
  public readonly readWriteEndpoint: PgBouncerProxyEndpoint;
  public readonly packagesBucket: s3.Bucket;
  /** The data VPC's S3 gateway endpoint: it passes the hosts' reads of their objects only. */
  public readonly s3Endpoint: ec2.GatewayVpcEndpoint;
  /** The consumer VPC's Secrets Manager endpoint; consumers reach it through `connections`. */
  public readonly consumerSecretsEndpoint: ec2.InterfaceVpcEndpoint;

  constructor(scope: Construct, id: string, props: PgBouncerTierProps) {
    super(scope, id);
    this.packagesBucket = this.newPackagesBucket();
    this.proxy = new PgBouncerProxy(this, 'Proxy', {
      cluster: props.cluster,
      packages: { bucket: this.packagesBucket, key: POOLER_PACKAGES_KEY },
      maxConnectionsPercent: props.maxConnectionsPercent,
    });
    this.readOnlyEndpoint = this.proxy.addEndpoint('ReadOnly', { vpc: props.consumerVpc, role: EndpointRole.READ_ONLY });
    this.readWriteEndpoint = this.proxy.addEndpoint('ReadWrite', { vpc: props.consumerVpc, role: EndpointRole.READ_WRITE });
    for (let i = 2; i <= props.readOnlyEndpoints; i++) this.proxy.addEndpoint(`ReadOnly${i}`, { vpc: props.consumerVpc, role: EndpointRole.READ_ONLY });

    // The hosts' GetObject of their packages is all the data VPC does with S3 (they install from the
    // packages object, not from Debian's archive): the gateway endpoint passes that and nothing else, so
    // nothing in the VPC reaches any other bucket, whatever credentials it holds. A gateway endpoint's
    // policy has Principal "*" and names its principals with aws:PrincipalArn (GATEWAY_ENDPOINT_POLICY:
    // https://docs.aws.amazon.com/vpc/latest/privatelink/vpc-endpoints-access.html#vpc-endpoint-policies-gateway,
    // https://docs.aws.amazon.com/vpc/latest/privatelink/vpc-endpoints-s3.html).
    this.s3Endpoint = props.dataVpc.addGatewayEndpoint('S3', { service: ec2.GatewayVpcEndpointAwsService.S3, subnets: [{ subnetType: ec2.SubnetType.PRIVATE_ISOLATED }] });
    this.s3Endpoint.addToPolicy(new iam.PolicyStatement({
      principals: [new iam.StarPrincipal()],
      actions: ['s3:GetObject'],
      resources: HOST_OBJECT_KEYS.map((key) => this.packagesBucket.arnForObjects(key)),
      conditions: { StringEquals: { [GATEWAY_ENDPOINT_PRINCIPAL_KEY]: this.proxy.hostRole.roleArn } },
    }));
    for (const [endpointId, service, purpose] of HOST_SERVICES) {
      const endpoint = this.hostEndpoint(props.dataVpc, endpointId, service, purpose);
      if (service === ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_MONITORING) {
        endpoint.addToPolicy(new iam.PolicyStatement({
          principals: [this.proxy.hostRole],
          actions: ['cloudwatch:PutMetricData'],
          resources: ['*'],
          conditions: { StringEquals: { 'cloudwatch:namespace': POOLER_METRICS_NAMESPACE } },
        }));
      }
      if (service === ec2.InterfaceVpcEndpointAwsService.CLOUDFORMATION) {
        endpoint.addToPolicy(new iam.PolicyStatement({ principals: [this.proxy.hostRole], actions: [...FLEET_SIGNAL_POLICY.actions], resources: [Aws.STACK_ID] }));
      }
      // The hosts boot once what they call exists: a host that cannot signal would fail the stack's creation.
      this.proxy.autoScalingGroup.node.defaultChild!.node.addDependency(endpoint);
    }
    this.proxy.autoScalingGroup.node.defaultChild!.node.addDependency(this.s3Endpoint);

    const group = new ec2.SecurityGroup(this, 'ConsumerSecretsEndpointSecurityGroup', {
      vpc: props.consumerVpc,
      description: 'Secrets Manager interface endpoint of the consumer VPC: HTTPS from the consumers only',
      allowAllOutbound: false,
    });
    this.consumerSecretsEndpoint = props.consumerVpc.addInterfaceEndpoint('SecretsManager', {
      service: ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
      privateDnsEnabled: true,
      open: false,
      securityGroups: [group],
    });
  }

  /**
   * Limits the consumer VPC's Secrets Manager endpoint to each consumer's read of its own password secret.
   * Called once the consumers exist (their users are added as they are granted).
   */
  public allowConsumerSecretReads(consumers: ReadonlyArray<{ readonly dbUser: string; readonly grantPrincipal: iam.IPrincipal }>): void {
    for (const { dbUser, grantPrincipal } of consumers) {
      this.consumerSecretsEndpoint.addToPolicy(new iam.PolicyStatement({
        principals: [grantPrincipal],
        actions: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'],
        resources: [this.proxy.consumerUserSecret(dbUser).secretArn],
      }));
    }
  }

  private hostEndpoint(vpc: ec2.Vpc, id: string, service: ec2.InterfaceVpcEndpointAwsService, purpose: string): ec2.InterfaceVpcEndpoint {
    const group = new ec2.SecurityGroup(this, `${id}EndpointSecurityGroup`, {
      vpc,
      description: `${id} interface endpoint of the data VPC: HTTPS from the PgBouncer hosts only (${purpose})`,
      allowAllOutbound: false,
    });
    const endpoint = vpc.addInterfaceEndpoint(id, { service, privateDnsEnabled: true, open: false, securityGroups: [group] });
    endpoint.connections.allowDefaultPortFrom(this.proxy, `PgBouncer hosts: ${purpose}`);
    return endpoint;
  }

  private newPackagesBucket(): s3.Bucket {
    const key = new kms.Key(this, 'PackagesKey', {
      description: 'Encrypts the PgBouncer hosts\' packages of the aurora-proxy-kit reference deployment',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
      pendingWindow: Duration.days(KMS_DELETION_WINDOW_DAYS),
    });
    const bucket = new s3.Bucket(this, 'Packages', {
      encryption: s3.BucketEncryption.KMS,
      encryptionKey: key,
      bucketKeyEnabled: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      versioned: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const reason = 'holds the one packages object the operator uploads; the hosts\' reads are in CloudTrail (S3 data events can be turned on for it), a log bucket of its own would add a bucket per deployment';
    Validations.of(bucket).acknowledge({ id: 'AwsSolutions-S1', reason });
    skipCheckov(bucket, [
      { id: 'CKV_AWS_18', comment: reason },
      { id: 'CKV_AWS_144', comment: 'the packages are Debian\'s, rebuilt from its archive at will; a replica in another Region adds nothing the archive lacks' },
    ]);
    return bucket;
  }
}
