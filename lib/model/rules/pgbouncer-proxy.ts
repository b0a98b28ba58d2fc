/**
 * Rules of the PgBouncer engine's fleet as a whole (lib/pgbouncer-proxy.ts, modules/pgbouncer-proxy): its
 * name, its consumer users, and the module's inputs that come in pairs. The fleet's sizing rules are in
 * pgbouncer-fleet.ts, its hosts' in pgbouncer-hosts.ts.
 */
import { POOL_MODES } from '../pgbouncer-ini';
import { FLEET_NAME_PATTERN } from '../pgbouncer-metrics';
import { type Rule, custom, oneOf, pattern } from '../rule-table';
import { type ApiRouteRuleInput, POOLER_HOST_APIS, POOLER_STACK_APIS, apiRouteRule } from './api-routes';

/** The Terraform module of the engine. */
const PGBOUNCER_MODULE = 'pgbouncer-proxy';

/**
 * Consumer users the hosts take: their user data carries every consumer secret's ARN, and the bootstrap
 * with this many (and every other value at its longest) fits EC2's 16 KB (worstCaseUserDataBytes).
 */
export const MAX_POOLER_CONSUMER_USERS = 15;

/**
 * The load balancer is named after the fleet (32 characters at most), its role and instance profile
 * `<name>-pooler-<suffix>` (a name_prefix of at most 38): 29 characters. The target groups' names are generated.
 */
export const FLEET_LOAD_BALANCER_NAME_PATTERN = '^[a-z][a-z0-9-]{0,28}$';

/** Where modules/pgbouncer-proxy's certificate function comes from (its `certificate_function` object). */
export interface CertificateFunctionCode {
  readonly filename?: string | null;
  readonly s3_bucket?: string | null;
  readonly s3_key?: string | null;
  readonly source_code_hash?: string | null;
}

/** S3 bucket names the hosts can reach by their virtual-hosted HTTPS name: no dots (the certificate's wildcard covers one label). */
export const PACKAGES_BUCKET_PATTERN = '^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$';
/** The longest packages key the hosts' user data has room for (its worst case, worstCaseUserDataBytes). */
export const PACKAGES_KEY_MAX_LENGTH = 128;
/**
 * Object keys of S3's safe characters, at most PACKAGES_KEY_MAX_LENGTH: the key is written into a shell line
 * of the user data, where a quote, `$` or a backquote would change the program.
 */
export const PACKAGES_KEY_PATTERN = `^[A-Za-z0-9!_.*'()/-]{1,${PACKAGES_KEY_MAX_LENGTH}}$`;
/** ELB reserves load balancer names that begin with this. */
export const RESERVED_LOAD_BALANCER_PREFIX = 'internal-';

export interface PgBouncerProxyRuleInput extends ApiRouteRuleInput {
  /** The Fleet dimension of the hosts' metrics. */
  readonly fleetName?: string;
  /** The Terraform module's `name`: the fleet's name there, which also names its load balancer and target groups. */
  readonly loadBalancerName?: string;
  /** Every consumer user, in the order added. */
  readonly consumerUsers?: ReadonlyArray<string>;
  readonly s3PrefixListId?: string | null;
  readonly vpcCidrBlock?: string | null;
  /** A listeners' certificate made outside the kit: its secret, and the CA it chains to. */
  readonly tlsSecretArn?: string | null;
  readonly tlsCaCertificate?: string | null;
  readonly certificateFunction?: CertificateFunctionCode | null;
  /** The packages object's bucket and key (undefined where CDK has a token). */
  readonly packagesBucket?: string;
  readonly packagesKey?: string;
  /** An endpoint's pool mode. */
  readonly poolMode?: string;
  /** An endpoint's name: the Terraform module's endpoints key. */
  readonly endpointName?: string;
}

const set = (v: unknown) => v !== undefined && v !== null;

export const PGBOUNCER_PROXY_RULES: ReadonlyArray<Rule<PgBouncerProxyRuleInput>> = [
  pattern({
    id: 'fleet-name',
    properties: ['fleetName'],
    notInTerraform:
      'the module\'s name also names its load balancer, so fleet-load-balancer-name holds it to a stricter form (at most 29 lower-case letters, digits and hyphens) whose every value is a valid Fleet dimension',
    pattern: FLEET_NAME_PATTERN,
    noDoubleOrTrailingHyphen: false,
    what: 'fleet name (the Fleet dimension of its metrics)',
    use: '1 to 255 letters, digits and . _ / : -, starting with a letter or digit',
    aws: {
      constraint: 'A CloudWatch alarm\'s dimension value is 1 to 255 characters (AWS::CloudWatch::Alarm Dimension); metric dimension values are ASCII without control characters',
      sources: ['https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-properties-cloudwatch-alarm-dimension.html', 'https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_Dimension.html'],
    },
  }),
  pattern({
    id: 'fleet-load-balancer-name',
    properties: ['loadBalancerName'],
    terraform: { module: PGBOUNCER_MODULE, names: { loadBalancerName: 'name' } },
    terraformOnly: 'CDK lets CloudFormation name the load balancer and its target groups; its fleetName is the metrics\' dimension only (fleet-name)',
    pattern: FLEET_LOAD_BALANCER_NAME_PATTERN,
    noDoubleOrTrailingHyphen: true,
    what: 'load balancer name',
    use: '1 to 29 lower-case letters, digits and hyphens, starting with a letter, without "--" or a trailing hyphen (the module names the load balancer after the fleet, at most 32 characters, and its role and instance profile <name>-pooler-<suffix>, a prefix of at most 38)',
    aws: {
      constraint: 'A load balancer\'s name is at most 32 characters, only alphanumeric characters or hyphens, neither beginning nor ending with a hyphen',
      sources: ['https://docs.aws.amazon.com/elasticloadbalancing/latest/APIReference/API_CreateLoadBalancer.html'],
    },
  }),
  custom({
    id: 'fleet-load-balancer-name-prefix',
    properties: ['loadBalancerName'],
    terraform: { module: PGBOUNCER_MODULE, names: { loadBalancerName: 'name' } },
    terraformOnly: 'CDK lets CloudFormation name the load balancer',
    summary: `not beginning with "${RESERVED_LOAD_BALANCER_PREFIX}", which ELB reserves`,
    aws: {
      constraint: `A load balancer's name must not begin with "${RESERVED_LOAD_BALANCER_PREFIX}"`,
      sources: ['https://docs.aws.amazon.com/elasticloadbalancing/latest/APIReference/API_CreateLoadBalancer.html'],
    },
    check: (i, n) =>
      i.loadBalancerName!.startsWith(RESERVED_LOAD_BALANCER_PREFIX)
        ? `${n('loadBalancerName')} ${i.loadBalancerName} begins with "${RESERVED_LOAD_BALANCER_PREFIX}", which Elastic Load Balancing reserves: the module names the load balancer after the fleet, so choose a name that does not`
        : undefined,
  }),
  pattern({
    id: 'pooler-packages-bucket',
    properties: ['packagesBucket'],
    terraform: { module: PGBOUNCER_MODULE, names: { packagesBucket: 'packages_bucket' } },
    pattern: PACKAGES_BUCKET_PATTERN,
    noDoubleOrTrailingHyphen: false,
    what: 'packages bucket name',
    use: '3 to 63 lower-case letters, digits and hyphens, starting and ending with a letter or digit, without dots (the hosts fetch from the bucket\'s virtual-hosted HTTPS name, and the wildcard certificate of s3.<region> covers one label)',
    aws: {
      constraint: 'A bucket name is 3 to 63 lower-case letters, digits, dots and hyphens, beginning and ending with a letter or digit; over HTTPS, a virtual-hosted-style request to a bucket whose name has dots fails the certificate check',
      sources: ['https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html', 'https://docs.aws.amazon.com/AmazonS3/latest/userguide/VirtualHosting.html'],
    },
  }),
  pattern({
    id: 'pooler-packages-key',
    properties: ['packagesKey'],
    terraform: { module: PGBOUNCER_MODULE, names: { packagesKey: 'packages_key' } },
    pattern: PACKAGES_KEY_PATTERN,
    noDoubleOrTrailingHyphen: false,
    what: 'packages object key',
    use: `1 to ${PACKAGES_KEY_MAX_LENGTH} of S3's safe characters, letters, digits and ! - _ . * ' ( ) / (the hosts' user data carries the key in a shell line)`,
    aws: {
      constraint: "S3 object keys of letters, digits and ! - _ . * ' ( ) / are safe in any application; other characters may need special handling",
      sources: ['https://docs.aws.amazon.com/AmazonS3/latest/userguide/object-keys.html'],
    },
  }),
  custom({
    id: 'pooler-consumer-users',
    properties: ['consumerUsers'],
    terraform: { module: PGBOUNCER_MODULE, names: { consumerUsers: 'consumer_users' } },
    summary: `each user once, at most ${MAX_POOLER_CONSUMER_USERS}: the hosts' user data carries every consumer secret's ARN`,
    aws: {
      constraint: `EC2 user data is limited to 16 KB in raw form, before base64 encoding; the hosts' bootstrap fits it with ${MAX_POOLER_CONSUMER_USERS} consumer secret ARNs and every other value at its longest`,
      sources: ['https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-add-user-data.html'],
    },
    check: (i, n) => {
      const users = i.consumerUsers!;
      const repeated = users.find((u, k) => users.indexOf(u) !== k);
      if (repeated !== undefined) return `${n('consumerUsers')} ${users.join(',')} names ${repeated} more than once: name each user once, and let consumers of the same access share it`;
      if (users.length > MAX_POOLER_CONSUMER_USERS) {
        return `${n('consumerUsers')} ${users.join(',')} are ${users.length} users: the hosts take at most ${MAX_POOLER_CONSUMER_USERS}, as their user data carries each user's secret ARN and EC2 user data is limited to 16 KB; share a user between consumers of the same access`;
      }
      return undefined;
    },
  }),
  custom({
    id: 'pooler-s3-egress-vpc-cidr',
    properties: ['s3PrefixListId'],
    terraform: { module: PGBOUNCER_MODULE, names: { s3PrefixListId: 's3_prefix_list_id', vpcCidrBlock: 'vpc_cidr_block' } },
    terraformOnly: 'CDK narrows the egress to the CIDR block of the cluster\'s VPC construct (vpc.vpcCidrBlock), which the module takes as a variable',
    // Both or neither: the module decides its egress rules by vpc_cidr_block, known at plan, as s3_prefix_list_id
    // is not when it comes from a gateway endpoint made in the same apply (for_each keys must be known).
    summary: 's3_prefix_list_id and vpc_cidr_block together, or neither: the hosts\' HTTPS egress goes to S3 and the VPC\'s interface endpoints, or to any address (a precondition)',
    check: (i, n) => {
      if (set(i.s3PrefixListId) && !set(i.vpcCidrBlock)) {
        return `${n('s3PrefixListId')} ${i.s3PrefixListId} narrows the hosts' HTTPS egress to S3 and the VPC: set ${n('vpcCidrBlock')} too, the VPC's CIDR block, where its interface endpoints are`;
      }
      if (set(i.vpcCidrBlock) && !set(i.s3PrefixListId)) {
        return `${n('vpcCidrBlock')} ${i.vpcCidrBlock} narrows the hosts' HTTPS egress to the VPC and S3: set ${n('s3PrefixListId')} too, the id of the Region's S3 prefix list (the gateway endpoint's prefix_list_id), or leave ${n('vpcCidrBlock')} null for HTTPS to any address`;
      }
      return undefined;
    },
  }),
  custom({
    id: 'pooler-tls-certificate-pair',
    properties: ['tlsSecretArn', 'tlsCaCertificate'],
    terraform: { module: PGBOUNCER_MODULE, names: { tlsSecretArn: 'tls_secret_arn', tlsCaCertificate: 'tls_ca_certificate' } },
    terraformOnly: 'CDK takes a certificate made outside the kit as one prop, tlsCertificate, whose secret and caCertificatePem are both required',
    summary: 'tls_secret_arn and tls_ca_certificate together, or neither for the module\'s own CA (a precondition)',
    check: (i, n) => {
      if (set(i.tlsSecretArn) && !set(i.tlsCaCertificate)) {
        return `${n('tlsCaCertificate')} is not set: a certificate made outside the module (${n('tlsSecretArn')}) comes with the CA consumers verify it against; pass that CA in ${n('tlsCaCertificate')}, or leave ${n('tlsSecretArn')} unset for the module's own CA`;
      }
      if (set(i.tlsCaCertificate) && !set(i.tlsSecretArn)) {
        return `${n('tlsSecretArn')} is not set: ${n('tlsCaCertificate')} is the CA of a certificate made outside the module, which the hosts read from a secret; pass that secret in ${n('tlsSecretArn')}, or leave ${n('tlsCaCertificate')} unset for the module's own CA`;
      }
      return undefined;
    },
  }),
  custom({
    id: 'pooler-certificate-function',
    properties: ['certificateFunction', 'tlsSecretArn'],
    terraform: { module: PGBOUNCER_MODULE, names: { certificateFunction: 'certificate_function', tlsSecretArn: 'tls_secret_arn' } },
    terraformOnly: 'CDK deploys the certificate function\'s handler as an asset it uploads itself (PgBouncerCertificate)',
    summary: 'without tls_secret_arn: filename, or s3_bucket and s3_key, not both (a precondition)',
    aws: {
      constraint: 'a function\'s code is one of: a .zip file uploaded with the request (the provider\'s filename), an S3 object (S3Bucket and S3Key), or a container image',
      sources: ['https://docs.aws.amazon.com/lambda/latest/api/API_FunctionCode.html'],
    },
    // Read only when the module issues the certificate itself; the object's attributes are the module's.
    check: (i, n) => {
      if (set(i.tlsSecretArn)) return undefined;
      const code = i.certificateFunction ?? {};
      const [file, bucket, key] = [set(code.filename), set(code.s3_bucket), set(code.s3_key)];
      const cf = n('certificateFunction');
      if (!file && !bucket && !key) {
        return `${cf} has neither filename nor s3_bucket and s3_key: without ${n('tlsSecretArn')} the module issues the listeners' certificate with the release's pooler-certificate.zip, so pass its path in filename, or the S3 object it was uploaded to in s3_bucket and s3_key`;
      }
      if (file && (bucket || key)) return `${cf} has filename with s3_bucket or s3_key: a function's code comes from one place, so pass filename or s3_bucket and s3_key, not both`;
      if (!file && bucket !== key) return `${cf} has only one of s3_bucket and s3_key: an S3 object is named by both`;
      return undefined;
    },
  }),
  pattern({
    id: 'pooler-endpoint-name',
    properties: ['endpointName'],
    // The module names each endpoint's security group after its key (name_prefix, description): an
    // RDS Proxy endpoint's name keeps it short and in EC2's characters, and keeps the keys when the engine changes.
    terraform: { module: PGBOUNCER_MODULE, names: { endpointName: 'endpoints key' } },
    terraformOnly: 'CDK names an endpoint\'s security group after its construct path, bounded to EC2\'s limits by securityGroupDescription',
    pattern: '^[a-z][a-z0-9-]{0,62}$',
    noDoubleOrTrailingHyphen: true,
    what: 'PgBouncer endpoint name',
    use: '1 to 63 lower-case letters, digits and hyphens, starting with a letter, without "--" or a trailing hyphen (as an RDS Proxy endpoint\'s)',
    aws: {
      constraint: 'A security group\'s name and description are up to 255 characters of a-z, A-Z, 0-9, spaces and ._-:/()#,@[]+=&;{}!$*; the provider takes a name_prefix of at most 100',
      sources: ['https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CreateSecurityGroup.html', 'https://registry.terraform.io/providers/hashicorp/aws/latest/docs/resources/security_group'],
    },
  }),
  oneOf({
    id: 'pooler-endpoint-pool-mode',
    properties: ['poolMode'],
    // The module takes the endpoints as a map of objects: the rule holds for each one's pool_mode.
    terraform: { module: PGBOUNCER_MODULE, names: { poolMode: 'endpoints pool_mode' } },
    values: POOL_MODES,
    what: 'a pool mode',
  }),
  // The hosts fetch their packages, read their secrets, publish metrics and answer Session Manager from the cluster's VPC.
  apiRouteRule<PgBouncerProxyRuleInput>('pooler-api-route', PGBOUNCER_MODULE, POOLER_HOST_APIS, 'the PgBouncer hosts'),
  // In a CloudFormation stack each new host also signals it.
  apiRouteRule<PgBouncerProxyRuleInput>('pooler-signal-route', undefined, POOLER_STACK_APIS, 'the PgBouncer hosts (their signal to the stack)'),
];
