/**
 * AWS constraints the kit relies on that are not checks of a user's input (those are rule rows with an
 * `aws` source, see rule-table.ts): how AWS behaves, which the kit's code is written around. Each names
 * its source and the test that exercises it; the test file names the fact's id, and a test holds the
 * two together. docs/AWS-RULES.md lists these beside the rule rows.
 */
import type { AwsSource } from './rule-table';
import { AURORA_PG_MAX_CONNECTIONS_SOURCE, CONNECTION_RESERVE, DB_PARAMETER_FORMULA_SOURCE, RESERVED_CONNECTIONS } from './sizing';

export interface AwsFact extends AwsSource {
  /** Stable id; the test that exercises the fact names it. */
  readonly id: string;
  /** What the kit does because of it. */
  readonly consequence: string;
  /** The test file (relative to the repository) that exercises the fact. */
  readonly exercisedBy: string;
}

const AURORA_PROXY_TLS = 'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy.howitworks.html#rds-proxy-security.tls';
const AURORA_PROXY_ENDPOINTS = 'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy-endpoints.html';
const AURORA_PROXY_TROUBLESHOOTING = 'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy.troubleshooting.html';

const PROXY_IAM_SETUP = 'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy-iam-setup.html';
const DB_PROXY_API = 'https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_DBProxy.html';
const IAM_DB_ACCOUNTS = 'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/UsingWithRDS.IAMDBAuth.DBAccounts.html';
const LAMBDA_NODEJS = 'https://docs.aws.amazon.com/lambda/latest/dg/lambda-nodejs.html';

/**
 * Where Lambda's Node.js runtimes keep the Amazon CA certificates (RDS's included), which Node.js 20 and
 * later runtimes load only when NODE_EXTRA_CA_CERTS names the file (lambda-nodejs.html, "CA certificate loading").
 */
export const RDS_CA_BUNDLE_ENV = { NODE_EXTRA_CA_CERTS: '/var/runtime/ca-cert.pem' } as const;

const EC2_CREATE_SECURITY_GROUP = 'https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CreateSecurityGroup.html';
const CFN_SECURITY_GROUP = 'https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-ec2-securitygroup.html';
/** EC2's bound on a security group's description (CreateSecurityGroup, GroupDescription). */
export const SECURITY_GROUP_DESCRIPTION_MAX_LENGTH = 255;
/** The characters EC2 takes in a VPC security group's name and description, as a character class. */
const SECURITY_GROUP_DESCRIPTION_CHARACTER = 'a-zA-Z0-9 ._\\-:/()#,@\\[\\]+=&;{}!$*';
export const SECURITY_GROUP_DESCRIPTION_PATTERN = new RegExp(`^[${SECURITY_GROUP_DESCRIPTION_CHARACTER}]*$`);
const SECURITY_GROUP_DESCRIPTION_REFUSED = new RegExp(`[^${SECURITY_GROUP_DESCRIPTION_CHARACTER}]`, 'g');
/** What stands for the middle of a subject too long for the description. */
const ELISION = '...';

/**
 * A security group's description that names `subject` (a construct path, which grows with the user's ids):
 * `template` puts the subject in its text. Characters EC2 refuses become `_`, and a subject too long for
 * the 255 characters keeps its start (the stack) and its end (the construct) around `...`: a long id is
 * the user's to choose, and CloudFormation would fail the group only at deploy.
 */
export function securityGroupDescription(template: (subject: string) => string, subject: string): string {
  const fixed = template('');
  if (!SECURITY_GROUP_DESCRIPTION_PATTERN.test(fixed) || fixed.length > SECURITY_GROUP_DESCRIPTION_MAX_LENGTH - 2 * ELISION.length) {
    throw new Error(`security group description template "${fixed}" is not one EC2 takes with room for a subject: use at most ${SECURITY_GROUP_DESCRIPTION_MAX_LENGTH - 2 * ELISION.length} of its characters`);
  }
  const clean = subject.replace(SECURITY_GROUP_DESCRIPTION_REFUSED, '_');
  const room = SECURITY_GROUP_DESCRIPTION_MAX_LENGTH - fixed.length;
  if (clean.length <= room) return template(clean);
  const head = Math.ceil((room - ELISION.length) / 2);
  const tail = room - ELISION.length - head;
  return template(`${clean.slice(0, head)}${ELISION}${clean.slice(clean.length - tail)}`);
}

export const AWS_FACTS: ReadonlyArray<AwsFact> = [
  {
    id: 'ec2-security-group-description',
    constraint:
      'A security group\'s description (GroupDescription) is up to 255 characters of a-z, A-Z, 0-9, spaces and ._-:/()#,@[]+=&;{}!$*; a security group rule\'s description takes the same characters',
    sources: [EC2_CREATE_SECURITY_GROUP, CFN_SECURITY_GROUP],
    consequence:
      'every security group the CDK constructs make names its construct path through securityGroupDescription, which bounds it to 255 characters and replaces other characters; the Terraform modules name groups after variables whose own rules bound them (pooler-endpoint-name for the PgBouncer engine\'s endpoints)',
    exercisedBy: 'test/constructs/security-group-descriptions.test.ts',
  },
  {
    id: 'proxy-end-to-end-iam-auth',
    constraint:
      'With DefaultAuthScheme IAM_AUTH, RDS Proxy connects to the database with IAM authentication instead of Secrets Manager credentials; its IAM role needs rds-db:connect for each database account used through the proxy, and no secret is required',
    sources: [PROXY_IAM_SETUP, DB_PROXY_API],
    consequence:
      'the proxy reads no secret (no Secrets Manager grant or endpoint for it); its role gets rds-db:connect on dbuser:<cluster resource id>/<user> for each consumer user, and nothing for the master user',
    exercisedBy: 'test/constructs/rds-proxy.test.ts',
  },
  {
    id: 'rds-iam-role-iam-only-login',
    constraint:
      'A PostgreSQL user that is a member of the rds_iam role can only log in with IAM database authentication; the master user can grant rds_iam',
    sources: [IAM_DB_ACCOUNTS],
    consequence: 'the role bootstrap grants rds_iam to every consumer role and clears its password; the master user never gets rds_iam',
    exercisedBy: 'test/integration/lambda/role-bootstrap.test.ts',
  },
  {
    id: 'lambda-node-rds-ca-bundle',
    constraint:
      'Lambda Node.js 20 and later runtimes include the AWS SDK for JavaScript v3 and keep the Amazon CA certificates, RDS\'s included, in /var/runtime/ca-cert.pem, loaded only when NODE_EXTRA_CA_CERTS names it',
    sources: [LAMBDA_NODEJS],
    consequence:
      'the role bootstrap, which connects to the writer directly (not through the proxy), sets NODE_EXTRA_CA_CERTS and verifies the server certificate; it uses the runtime\'s Secrets Manager client rather than bundling one',
    exercisedBy: 'test/constructs/database-role-bootstrap.test.ts',
  },
  {
    id: 'proxy-tls-custom-endpoint-identity',
    constraint:
      'RDS Proxy serves ACM wildcard certificates for *.proxy-<id>.<region>.rds.amazonaws.com that chain to Amazon Trust Services roots; VERIFY_IDENTITY works on the default endpoint only, not on endpoints you create (<name>.endpoint.proxy-<id>...)',
    sources: [AURORA_PROXY_TLS, AURORA_PROXY_ENDPOINTS, 'https://www.amazontrust.com/repository/'],
    consequence:
      'consumers of a custom endpoint use DB_TLS=verify-proxy-domain: the chain must end at an Amazon root and the certificate must be valid for the proxy\'s default endpoint (DB_TLS_SERVER_NAME), whose domain DB_HOST must share',
    exercisedBy: 'test/lambda/proxy-tls.test.ts',
  },
  {
    id: 'pooler-authentication-failure-codes',
    constraint:
      'PgBouncer reports its own errors, failed logins included, as SQLSTATE 08P01; RDS Proxy documents its login failures by message ("IAM authentication failed", "has no credentials for the role") without a SQLSTATE',
    sources: [AURORA_PROXY_TROUBLESHOOTING, 'https://github.com/pgbouncer/pgbouncer/blob/master/src/client.c'],
    consequence: 'consumers classify those messages as authentication failures and never retry them, whatever their SQLSTATE',
    exercisedBy: 'test/lambda/hardening.test.ts',
  },
  {
    id: 'asg-elb-health-checks-replace',
    constraint:
      'With ELB health checks turned on, an Auto Scaling group replaces an instance that any of its target groups reports unhealthy; a Network Load Balancer whose targets are all unhealthy routes to all of them (fails open); EC2 health checks find an instance unhealthy when it is not running',
    sources: ['https://docs.aws.amazon.com/autoscaling/ec2/userguide/health-checks-overview.html', 'https://docs.aws.amazon.com/elasticloadbalancing/latest/network/target-group-health-checks.html'],
    consequence:
      'the PgBouncer hosts are judged by EC2\'s checks only (the load balancer\'s fail on every host at once when Aurora\'s servers do); a PgBouncer unit at its systemd start limit powers the host off, which EC2\'s checks see',
    exercisedBy: 'test/constructs/pgbouncer-proxy.test.ts',
  },
  {
    id: 'aurora-pg-max-connections',
    constraint:
      'Aurora PostgreSQL\'s default max_connections is LEAST({DBInstanceClassMemory/9531392},5000), and DBInstanceClassMemory is the class\'s memory less what the OS and the RDS processes that manage the instance use: AWS\'s published values (db.r6g.xlarge 3479, db.r5.xlarge 3300) are below the formula on the nominal 32 GiB (3604)',
    sources: [AURORA_PG_MAX_CONNECTIONS_SOURCE, DB_PARAMETER_FORMULA_SOURCE],
    consequence:
      'each catalog class\'s max_connections is AWS\'s published value for the class or for one of its memory and architecture (the xlarge classes: 3479 on Graviton, 3300 on Intel), 5000 where the cap holds whatever the deduction, and otherwise the formula less the largest shortfall AWS\'s table shows; the catalog says which (max_connections_basis)',
    exercisedBy: 'test/model/sizing.test.ts',
  },
  {
    id: 'aurora-pg-reserved-connections',
    constraint:
      'AWS asks for max_connections to cover the applications\' connections plus at least 3 for AWS automation; PostgreSQL refuses an ordinary role once only superuser_reserved_connections (3, for superusers: rdsadmin) and rds.rds_superuser_reserved_connections (2, for rds_superuser: the master user) slots are free',
    sources: [...new Set([AURORA_PG_MAX_CONNECTIONS_SOURCE, ...CONNECTION_RESERVE.map((p) => p.source).filter((s) => s.startsWith('https://'))])],
    consequence: `every pool (RDS Proxy, the PgBouncer fleet, the rehearsal) stops ${RESERVED_CONNECTIONS} connections short of max_connections: ${CONNECTION_RESERVE.map((p) => `${p.id} ${p.connections}`).join(', ')} (lib/model/sizing.ts CONNECTION_RESERVE)`,
    exercisedBy: 'test/model/sizing.test.ts',
  },
  {
    id: 'proxy-max-connections-percent',
    constraint:
      'RDS Proxy\'s MaxConnectionsPercent (default 100) is a percent of the target\'s max_connections; AWS advises lowering it when connections must be kept for clients that bypass the proxy or for administration',
    sources: ['https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy-connections.html', 'https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/rds-proxy-best-practices.configuration.html'],
    consequence: 'the kit gives the proxy at most the percent of max_connections that leaves the reserved connections (99 on every catalog class), so what the proxy may open is the sizing the kit outputs',
    exercisedBy: 'test/model/sizing.test.ts',
  },
  {
    id: 'session-manager-minimal-instance-permissions',
    constraint:
      'Session Manager needs of an instance\'s role only ssm:UpdateInstanceInformation and ssmmessages:CreateControlChannel, CreateDataChannel, OpenControlChannel and OpenDataChannel (plus s3:GetEncryptionConfiguration and kms:Decrypt for session logs in S3 and KMS-encrypted sessions); AmazonSSMManagedInstanceCore also grants ssm:GetParameter(s) on every parameter',
    sources: ['https://docs.aws.amazon.com/systems-manager/latest/userguide/getting-started-create-iam-instance-profile.html', 'https://docs.aws.amazon.com/aws-managed-policy/latest/reference/AmazonSSMManagedInstanceCore.html'],
    consequence: 'the PgBouncer hosts\' role gets those five actions in a statement of its own (SESSION_MANAGER_INSTANCE_POLICY), in both flavours, and no AWS-managed policy',
    exercisedBy: 'test/constructs/pgbouncer-proxy.test.ts',
  },
  {
    id: 'aws-provider-db-proxy-default-auth-scheme',
    constraint:
      'hashicorp/aws added the default_auth_scheme argument of aws_db_proxy (RDS Proxy\'s DefaultAuthScheme, end-to-end IAM authentication) in 6.15.0 (CHANGELOG 6.15.0, October 2, 2025: "Add default_auth_scheme argument", #44309); an earlier 6.x refuses the argument',
    sources: ['https://github.com/hashicorp/terraform-provider-aws/blob/main/CHANGELOG.md#6150-october-2-2025', 'https://github.com/hashicorp/terraform-provider-aws/pull/44309'],
    consequence: 'modules/rds-proxy, and the examples that call it, require hashicorp/aws >= 6.15 (PROVIDER_ARGUMENT_FLOORS); the other modules keep >= 6.0',
    exercisedBy: 'test/terraform/generated.test.ts',
  },
  {
    id: 'ec2-user-data-16kb',
    constraint: 'EC2 user data is limited to 16 KB in raw form, before it is base64-encoded',
    sources: ['https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/user-data.html'],
    consequence:
      'the PgBouncer engine\'s bootstrap is checked at its longest (every placeholder at its maximum) in CDK, and on the rendered text in Terraform (a precondition); consumer users are capped at 15',
    exercisedBy: 'test/integration/model/pgbouncer-bootstrap.test.ts',
  },
  {
    id: 'tiered-cache-needs-io-optimized',
    constraint:
      'Aurora PostgreSQL Optimized Reads\' tiered cache (pages evicted from the buffer pool kept on the instance\'s NVMe) is available only on Aurora I/O-Optimized clusters; temporary objects on NVMe are available on both storage configurations',
    sources: ['https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/AuroraPostgreSQL.optimized.reads.html', 'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/Aurora.Overview.StorageReliability.html#aurora-storage-type'],
    consequence:
      'the cluster is always aurora-iopt1 (AuroraOptimizedReads, modules/aurora-optimized-reads); the cost estimate prices Standard only as a comparison and names the tiered cache it would lose',
    exercisedBy: 'test/model/cost-estimate.test.ts',
  },
  {
    id: 'rds-proxy-billed-per-database-vcpu',
    constraint:
      'RDS Proxy is billed per vCPU per hour of the database instances it fronts (for provisioned instances at least 2 vCPUs), whatever its traffic or connections',
    sources: ['https://aws.amazon.com/rds/proxy/pricing/'],
    consequence: 'the cost estimate prices RDS Proxy from the cluster\'s instance classes (the catalog\'s vCPUs), and finds where the PgBouncer fleet, whose cost does not grow with the database, becomes cheaper',
    exercisedBy: 'test/model/cost-estimate.test.ts',
  },
  {
    id: 'interface-endpoint-billed-per-az-hour',
    constraint: 'An interface VPC endpoint is billed for each hour it is provisioned in each Availability Zone, plus each GB it processes; the endpoint service itself carries no hourly charge (its load balancer does)',
    sources: ['https://aws.amazon.com/privatelink/pricing/'],
    consequence: 'the cost estimate counts each interface endpoint once per subnet (AZ) it is in, and names data processed with its unit price instead of guessing a volume',
    exercisedBy: 'test/model/cost-estimate.test.ts',
  },
  {
    id: 'aurora-failover-target-restarts',
    constraint:
      'In a failover Aurora restarts the writer DB instance and the failover target, the reader it promotes; with read availability (Aurora PostgreSQL 12.14, 13.10, 14.7, 15.2 and later) the other readers stay available, before it every instance restarted. An instance endpoint keeps naming its instance when the instance changes role',
    sources: [
      'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/aurora-mysql-survivable-replicas.html',
      'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/Aurora.Overview.Endpoints.html',
      'https://www.pgpool.net/docs/latest/en/html/example-aurora.html',
    ],
    consequence:
      'no server connection of the PgBouncer engine\'s read-only pools lives through a promotion, and each new one runs READ_ONLY_ROLE_GUARD at login (connect_query), which ends it on a writer before a client gets it: no read reaches the writer through the read-only listener; the host agent then moves the promoted reader\'s pools to the former writer. The rehearsal\'s failover restarts the promoted replica as the writer (startPromoted)',
    exercisedBy: 'test/integration/model/pgbouncer-bootstrap.test.ts',
  },
];
