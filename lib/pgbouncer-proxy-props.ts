import { Duration } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type { AuroraOptimizedReads } from './aurora-optimized-reads';
import type { PgBouncerTlsCertificate } from './pgbouncer-certificate';
import type { PgBouncerPackages } from './pgbouncer-packages';
import type { ApiRoutes, VpcApiEndpoints } from './vpc-api-routes';

/** Properties of a PgBouncerProxy. */
export interface PgBouncerProxyProps {
  /** The cluster the fleet pools connections to; the hosts run in its VPC. */
  readonly cluster: AuroraOptimizedReads;
  /** The packages the hosts install at boot (see PgBouncerPackages). */
  readonly packages: PgBouncerPackages;
  /**
   * The listeners' TLS certificate, issued for the names consumers connect to (the interface endpoints'
   * DNS names), and the CA consumers verify it against.
   * @default - a certificate from a CA the kit manages (PgBouncerCertificate), for every interface endpoint of the endpoint service
   */
  readonly tlsCertificate?: PgBouncerTlsCertificate;
  /**
   * Hosts of the fleet (2..20). The group has a fixed size: each process's pool is a share of each
   * target's budget, so a host added by scaling would overrun max_connections.
   * @default 2
   */
  readonly hosts?: number;
  /**
   * Graviton instance type of the hosts; its vCPUs decide the PgBouncer processes per host.
   * @default 'c7g.large'
   */
  readonly instanceType?: string;
  /**
   * The hosts' AMI (Debian 13 arm64), pinned: look it up once in the Region (`aws ssm get-parameter --name
   * /aws/service/debian/release/13/latest/arm64`) and change it on purpose; a new id replaces every host,
   * one at a time, each waiting on the new host's signal.
   * @default - a CloudFormation parameter `<path>ImageId<hash>` of type AWS::EC2::Image::Id with no default: the first
   * deploy must pass it (`cdk deploy --parameters ...`), later deploys keep it until another is passed
   */
  readonly imageId?: string;
  /**
   * Subnets of the hosts and the Network Load Balancer, in the cluster's VPC (at least two zones).
   * @default - the VPC's isolated subnets
   */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /**
   * How the hosts reach the AWS APIs they call from the VPC: S3 (the packages object), Secrets Manager (their
   * secrets), CloudWatch (PutMetricData), CloudFormation (SignalResource) and SSM, SSM Messages and EC2 Messages
   * (Session Manager). CREATE makes the VPC's endpoints of each (shared with the kit's other constructs in the
   * VPC) with policies passing only the hosts' calls; BRING_YOUR_OWN uses `vpcEndpoints` or egress of
   * `vpcSubnets`, and synth fails naming each API that has neither.
   * @default ApiRoutes.CREATE
   */
  readonly apiRoutes?: ApiRoutes;
  /**
   * Your VPC endpoints (with `apiRoutes: ApiRoutes.BRING_YOUR_OWN`); their policies must pass the hosts' calls and their
   * security groups admit HTTPS from the hosts (`connections`).
   * @default - none: endpoints of the VPC made elsewhere in the app, or egress of `vpcSubnets`
   */
  readonly vpcEndpoints?: VpcApiEndpoints;
  /**
   * Share of each target's max_connections the whole fleet may open (bounds: the kit's `max-connections-percent` rule); the fleet never takes the
   * connections the kit reserves on each instance (RESERVED_CONNECTIONS).
   * @default 100
   */
  readonly maxConnectionsPercent?: number;
  /**
   * Share of max_connections the fleet keeps open while idle (0..maxConnectionsPercent): each process's
   * min_pool_size, open at all times.
   * @default 5
   */
  readonly maxIdleConnectionsPercent?: number;
  /**
   * Share of each target's pool budget (maxConnectionsPercent of max_connections, less the reserve) the
   * session-pooling listener of its role takes (bounds: the kit's `fleet-session-max-connections-percent` rule),
   * once an endpoint of that role is added with `poolMode: PoolMode.SESSION`; the transaction pools keep the
   * rest, so both never exceed the budget. Each session client holds one of these connections for as long as it
   * stays connected.
   * @default 25
   */
  readonly sessionMaxConnectionsPercent?: number;
  /**
   * How long a client waits to borrow a pooled connection (bounds: the kit's `borrow-timeout` rule; a value
   * outside them fails synth with the range).
   * @default Duration.seconds(120)
   */
  readonly connectionBorrowTimeout?: Duration;
  /**
   * The listeners' TCP idle timeout (60..6000 s); PgBouncer's keepalives and client idle timeout follow it.
   * @default Duration.seconds(350)
   */
  readonly tcpIdleTimeout?: Duration;
  /**
   * The read-only listener's server role on Aurora (a role without write privileges); its password is
   * generated into `readOnlyServerSecret`.
   * @default 'apk_pooler_reader'
   */
  readonly readOnlyServerUser?: string;
  /**
   * The id of the Region's S3 managed prefix list (`com.amazonaws.<region>.s3`), to narrow the hosts'
   * HTTPS egress to S3 and the VPC. Without it the hosts may send HTTPS anywhere, which in an isolated
   * VPC reaches only its endpoints.
   * @default - HTTPS egress to any address
   */
  readonly s3PrefixListId?: string;
  /**
   * The fleet's name: the Fleet dimension of the metrics its hosts publish (1 to 255 letters, digits
   * and `. _ / : -`).
   * @default - the stack's name and the construct's path in it, e.g. `MyStack/Pooling/PgBouncer`
   */
  readonly fleetName?: string;
}
