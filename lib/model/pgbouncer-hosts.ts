/**
 * The PgBouncer engine's host instance types: Graviton (arm64, as the Debian 13 arm64 image is) and
 * their vCPUs, which decide the processes per host (pgbouncer-fleet.ts). A small table rather than a
 * lookup, so synth and plan stay offline; a type outside it is refused with the types it knows.
 */
import { fleetListenerPoolMode, fleetListenerRole, type FleetListener } from './pgbouncer-fleet';
import { PoolMode } from './pgbouncer-ini';
import { custom, pattern, type Rule } from './rule-table';
import { EndpointRole } from './vocabulary';

/**
 * Debian's public SSM parameter for its latest Debian 13 arm64 AMI (Debian cloud team, "Debian on
 * AWS": AMI ids are published under /aws/service/debian/release/<version>/latest/<arch>). Where a user
 * looks the hosts' image up, once, never what a deploy resolves: it moves with every Debian point release
 * and security refresh, so resolving it at each deploy would replace every host in a deploy that changed
 * nothing of theirs.
 */
export const DEBIAN_13_ARM64_IMAGE_PARAMETER = '/aws/service/debian/release/13/latest/arm64';

/** How to look the current Debian 13 arm64 AMI id up in a Region. */
export const POOLER_IMAGE_LOOKUP = `aws ssm get-parameter --name ${DEBIAN_13_ARM64_IMAGE_PARAMETER} --query Parameter.Value --output text --region <region>`;

/**
 * An AMI id: `ami-` and 8 or 17 lower-case hexadecimal digits (EC2 API Reference, Image: ImageId; EC2 User
 * Guide, resource-ids: "resource identifiers ... 17-character IDs", older ones 8).
 */
export const POOLER_IMAGE_ID_PATTERN = '^ami-([0-9a-f]{8}|[0-9a-f]{17})$';

/**
 * What the hosts' SSM Agent needs for Session Manager, and nothing more (AWS Systems Manager User Guide,
 * "Create a custom IAM role for Session Manager": the minimal instance permissions). Not the AWS-managed
 * AmazonSSMManagedInstanceCore, whose ssm:GetParameter(s) on every parameter lets a host read all of the
 * account's SSM parameters. The guide's s3:GetEncryptionConfiguration and kms:Decrypt are for session logs in
 * S3 and KMS-encrypted sessions, which the kit does not configure. On Resource "*", as the guide's policy.
 */
export const SESSION_MANAGER_INSTANCE_POLICY = {
  actions: ['ssm:UpdateInstanceInformation', 'ssmmessages:CreateControlChannel', 'ssmmessages:CreateDataChannel', 'ssmmessages:OpenControlChannel', 'ssmmessages:OpenDataChannel'],
  sources: ['https://docs.aws.amazon.com/systems-manager/latest/userguide/getting-started-create-iam-instance-profile.html', 'https://docs.aws.amazon.com/systems-manager/latest/userguide/systems-manager-setting-up-messageAPIs.html'],
} as const;

/** The Network Load Balancer's listener port of each role, which consumers connect to. */
export const POOLER_LISTENER_PORTS: Readonly<Record<EndpointRole, number>> = {
  [EndpointRole.READ_WRITE]: 5432,
  [EndpointRole.READ_ONLY]: 5433,
};

/**
 * The Network Load Balancer's listener port of each session-pooling listener (FleetListener
 * readWriteSession, readOnlySession), which consumers of an endpoint in session pooling connect to.
 */
export const POOLER_SESSION_LISTENER_PORTS: Readonly<Record<EndpointRole, number>> = {
  [EndpointRole.READ_WRITE]: 5434,
  [EndpointRole.READ_ONLY]: 5435,
};

/** The NLB's listener port of a hosts' listener: what consumers of its endpoints connect to. */
export function poolerListenerPort(listener: FleetListener): number {
  const role = fleetListenerRole(listener);
  return fleetListenerPoolMode(listener) === PoolMode.SESSION ? POOLER_SESSION_LISTENER_PORTS[role] : POOLER_LISTENER_PORTS[role];
}

/** The read-only listener's server role on Aurora, unless the user names another. */
export const DEFAULT_POOLER_READ_ONLY_SERVER_USER = 'apk_pooler_reader';

/** vCPUs by size, the same for every family below (EC2 instance type specifications, general purpose / compute / memory optimized). */
export const GRAVITON_SIZE_VCPUS: Readonly<Record<string, number>> = {
  medium: 1,
  large: 2,
  xlarge: 4,
  '2xlarge': 8,
  '4xlarge': 16,
  '8xlarge': 32,
  '12xlarge': 48,
  '16xlarge': 64,
};

/** The Graviton families the engine runs on (Graviton3 and Graviton4, compute, general purpose, memory). */
export const POOLER_INSTANCE_FAMILIES: ReadonlyArray<string> = ['c7g', 'm7g', 'r7g', 'c8g', 'm8g', 'r8g'];

/** The hosts' default instance type: 2 vCPUs, compute optimized (PgBouncer is CPU- and network-bound). */
export const DEFAULT_POOLER_INSTANCE_TYPE = 'c7g.large';

/** A Graviton family: letters, a generation, then `g` (an arm64 processor), then optional attributes. */
export const GRAVITON_TYPE_PATTERN = '^[a-z]+[0-9]+g[a-z]*\\.[a-z0-9]+$';

/** vCPUs of a known pooler instance type, else undefined. */
export function poolerInstanceVcpus(instanceType: string): number | undefined {
  const [family, size] = instanceType.split('.');
  if (family === undefined || size === undefined || !POOLER_INSTANCE_FAMILIES.includes(family)) return undefined;
  return GRAVITON_SIZE_VCPUS[size];
}

export interface PoolerHostRuleInput {
  readonly instanceType?: string;
  /** The hosts' AMI: pinned, changed on purpose (a rolling replacement of every host). */
  readonly imageId?: string;
  readonly readOnlyServerUser?: string;
  /** A consumer user added to the pooler. */
  readonly consumerUser?: string;
}

/** A PostgreSQL role name that needs no quoting anywhere (ini files, the auth file, SQL). */
export const POOLER_USER_PATTERN = '^[a-z_][a-z0-9_]{0,62}$';

/** The Terraform module of the engine (modules/pgbouncer-proxy). */
const HOSTS_MODULE = 'pgbouncer-proxy';

export const POOLER_HOST_RULES: ReadonlyArray<Rule<PoolerHostRuleInput>> = [
  pattern({
    id: 'pooler-instance-graviton',
    properties: ['instanceType'],
    terraform: { module: HOSTS_MODULE, names: { instanceType: 'instance_type' } },
    pattern: GRAVITON_TYPE_PATTERN,
    noDoubleOrTrailingHyphen: false,
    what: 'Graviton (arm64) instance type',
    use: `a Graviton type such as ${DEFAULT_POOLER_INSTANCE_TYPE}: the hosts run the Debian 13 arm64 image`,
  }),
  custom({
    id: 'pooler-instance-known',
    properties: ['instanceType'],
    terraform: { module: HOSTS_MODULE, names: { instanceType: 'instance_type' } },
    summary: 'a Graviton type whose vCPUs the kit knows',
    check: (i, n) =>
      new RegExp(GRAVITON_TYPE_PATTERN).test(i.instanceType!) && poolerInstanceVcpus(i.instanceType!) === undefined
        ? `${n('instanceType')} ${i.instanceType} is not a pooler instance type the kit knows the vCPUs of: use a family of ${POOLER_INSTANCE_FAMILIES.join(', ')} in size ${Object.keys(GRAVITON_SIZE_VCPUS).join(', ')}`
        : undefined,
  }),
  pattern({
    id: 'pooler-image-id',
    properties: ['imageId'],
    terraform: { module: HOSTS_MODULE, names: { imageId: 'image_id' } },
    pattern: POOLER_IMAGE_ID_PATTERN,
    noDoubleOrTrailingHyphen: false,
    what: 'AMI id',
    use: `the Debian 13 arm64 AMI of the Region, ami- and 8 or 17 hexadecimal digits, looked up once with ${POOLER_IMAGE_LOOKUP} and changed on purpose (every host is replaced)`,
    aws: {
      constraint: 'an AMI id is ami- followed by 8 or 17 lower-case hexadecimal digits',
      sources: ['https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_Image.html', 'https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/resource-ids.html'],
    },
  }),
  pattern({
    id: 'pooler-user-name',
    properties: ['readOnlyServerUser', 'consumerUser'],
    // The module takes the consumer users as a list: the rule holds for each of them.
    terraform: { module: HOSTS_MODULE, names: { readOnlyServerUser: 'read_only_server_user', consumerUser: 'consumer_users item' } },
    pattern: POOLER_USER_PATTERN,
    noDoubleOrTrailingHyphen: false,
    what: 'database user name',
    use: 'lower-case letters, digits and underscores, not starting with a digit, at most 63 characters',
  }),
];
