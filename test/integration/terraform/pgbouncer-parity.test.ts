import * as fs from 'fs';
import * as path from 'path';
import { App, CfnResource, Duration } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { EndpointRole } from '../../../lib/model';
import { substitutePlaceholders } from '../../../lib/model/pgbouncer-bootstrap';
import { AuroraOptimizedReads } from '../../../lib/aurora-optimized-reads';
import { PgBouncerProxy } from '../../../lib/pgbouncer-proxy';
import { ApiRoutes } from '../../../lib/vpc-api-routes';
import { readDeploymentContext } from '../../../lib/reference-app/app-context';
import { POOLER_PACKAGES_KEY } from '../../../lib/reference-app/pgbouncer-tier';
import { READER_DB_USER, ReferenceDeployment, WRITER_DB_USER } from '../../../lib/reference-app/reference-deployment';
import { variableDefaults } from '../../../lib/terraform';
import { isolatedVpc, logicalIdOf, newStack, ref } from '../../helpers/cdk';
import { FLEET_SIGNAL_POLICY } from '../../../lib/model/pgbouncer-rollout';
import type { PlanOfResources, ResourceChange } from '../../../lib/terraform/plan-json';
import { EXAMPLE_POOLER_IMAGE_ID, ROOT, TerraformDir } from '../../terraform/terraform-cli';

/**
 * Parity of the PgBouncer engine's two flavours: the construct PgBouncerProxy, built the way
 * modules/examples/complete-pgbouncer calls modules/pgbouncer-proxy (the example's defaults, its consumer
 * users and endpoints, read from its plan), against that plan. Each side's values are read from its own
 * output (template, plan) and compared with the other's, so a change to one flavour alone fails here
 * while a change made to both passes.
 */

type Props = Record<string, unknown>;

/** CloudFormation type -> Terraform type, for the kinds both flavours create one for one. */
const TYPE_MAP: Readonly<Record<string, string>> = {
  'AWS::AutoScaling::AutoScalingGroup': 'aws_autoscaling_group',
  'AWS::EC2::LaunchTemplate': 'aws_launch_template',
  'AWS::IAM::Role': 'aws_iam_role',
  'AWS::IAM::Policy': 'aws_iam_role_policy',
  'AWS::IAM::InstanceProfile': 'aws_iam_instance_profile',
  'AWS::ElasticLoadBalancingV2::LoadBalancer': 'aws_lb',
  'AWS::ElasticLoadBalancingV2::Listener': 'aws_lb_listener',
  'AWS::ElasticLoadBalancingV2::TargetGroup': 'aws_lb_target_group',
  'AWS::EC2::VPCEndpointService': 'aws_vpc_endpoint_service',
  'AWS::EC2::VPCEndpoint': 'aws_vpc_endpoint',
  'AWS::EC2::SecurityGroup': 'aws_security_group',
  'AWS::SecretsManager::Secret': 'aws_secretsmanager_secret',
};

/**
 * What one flavour states as a resource and the other as a property, compared as properties below:
 * the endpoint service's permissions (allowed_principals), the role's managed policy (ManagedPolicyArns),
 * a secret's first value (GenerateSecretString), security group rules (inline in CloudFormation at times).
 */
const CDK_AS_PROPERTY = ['AWS::EC2::VPCEndpointServicePermissions', 'AWS::EC2::SecurityGroupIngress', 'AWS::EC2::SecurityGroupEgress'];
const TERRAFORM_AS_PROPERTY = ['aws_iam_role_policy_attachment', 'aws_secretsmanager_secret_version', 'aws_vpc_security_group_ingress_rule', 'aws_vpc_security_group_egress_rule'];

/** A security group rule in words both flavours share: the groups by their part in the fleet. */
interface SgRule {
  group: string;
  direction: 'ingress' | 'egress';
  protocol: string;
  ports: string;
  peer: string;
}

interface Inventory {
  counts: Record<string, number>;
  /** Types of the fleet's resources that neither TYPE_MAP nor the as-property lists name. */
  unmapped: string[];
  group: Props;
  launchTemplate: Props;
  userData: string;
  /** Placeholders of the bootstrap this flavour gives a value for. */
  placeholders: string[];
  loadBalancer: Props;
  listeners: Props[];
  targetGroups: Props[];
  endpointService: Props;
  endpoints: Props[];
  rules: SgRule[];
  hostRole: Props;
  secrets: Props[];
}

const sorted = <T>(items: T[]): T[] => [...items].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
const uniqueSorted = (items: string[]): string[] => [...new Set(items)].sort();
/** Placeholder values known at synth or plan on both sides are compared as they are; the others by name. */
const DEPLOY_TIME = (name: string) => `<deploy-time ${name}>`;
/** CloudFormation's ISO 8601 durations as CDK writes them (PT5M, PT1M30S), in seconds. */
function isoSeconds(duration: string): number {
  const m = /^PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?$/.exec(duration);
  if (m === null) throw new Error(`not a PT duration: ${duration}`);
  return Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
}
/** The peer of an egress rule to the S3 gateway endpoint's prefix list, in both flavours. */
const S3_PREFIX_LIST = 'the S3 prefix list';
/** A prefix list id the CDK side is given, which its rules show as S3_PREFIX_LIST. */
const S3_PREFIX_LIST_ID = 'pl-63a5400a';
const ports = (from: unknown, to: unknown) => (from === to ? String(from) : `${String(from)}-${String(to)}`);
/** This account's root principal, however each flavour writes the account and partition. */
const principal = (arn: string) => (/^arn:[^:]+:iam::[^:]+:root$/.test(arn) ? 'this account' : arn);
const TEMPLATE = path.join(ROOT, 'modules/pgbouncer-proxy/templates/bootstrap.sh.tftpl');
/** The kit CA's resources in the module (certificate.tf): its secrets and policy, and its function's module. */
const CERTIFICATE_ADDRESS = /^module\.pooler\.((data\.)?[a-z0-9_]+\.(tls|ca|certificate)(\[.*\])?|module\.certificate_function\[0\]\..*)$/;

/** A for_each instance's key (plan JSON's `index`). */
const keyOf = (r: ResourceChange) => String((r as unknown as { index?: unknown }).index);

function terraformInventory(plan: PlanOfResources, unknownToCdk: ReadonlySet<string>): Inventory {
  // The kit CA's resources (certificate.tf, PgBouncerCertificate) have tests of their own and are left out on both sides.
  const pooler = plan.resource_changes.filter((r) => r.address.startsWith('module.pooler.') && !CERTIFICATE_ADDRESS.test(r.address));
  const managed = pooler.filter((r) => r.mode === 'managed');
  const of = (type: string) => managed.filter((r) => r.type === type);
  const after = (r: { change: { after: Props | null } }) => r.change.after as Props;
  const config = (plan.configuration.root_module as unknown as { module_calls: Record<string, { module: { resources: Array<{ address: string; expressions: Props }> } }> }).module_calls.pooler.module.resources;
  const references = (address: string, key: string) => ((config.find((c) => c.address === address)!.expressions[key] as { references?: string[] } | undefined)?.references ?? []);
  const endpointRoles = plan.output_changes!.endpoints.after as Record<string, { target_role: string; port: number }>;

  const counts: Record<string, number> = {};
  const tfTypes = new Set(Object.values(TYPE_MAP));
  for (const r of managed) if (tfTypes.has(r.type)) counts[r.type] = (counts[r.type] ?? 0) + 1;
  const unmapped = uniqueSorted(managed.map((r) => r.type).filter((t) => !tfTypes.has(t) && !TERRAFORM_AS_PROPERTY.includes(t)));

  const asg = after(of('aws_autoscaling_group')[0]);
  const refresh = (asg.instance_refresh as Props[])[0];
  const lt = after(of('aws_launch_template')[0]);
  const metadata = (lt.metadata_options as Props[])[0];
  const ebs = ((lt.block_device_mappings as Props[])[0].ebs as Props[])[0];

  // The bootstrap's values: known at plan, or a deploy-time marker (unknown here or to CloudFormation at synth).
  const variables = plan.output_changes!.bootstrap_variables as unknown as { after: Record<string, string>; after_unknown?: Record<string, boolean> };
  const values: Record<string, string> = {};
  for (const name of Object.keys({ ...variables.after, ...variables.after_unknown })) values[name] = variables.after_unknown?.[name] || unknownToCdk.has(name) ? DEPLOY_TIME(name) : variables.after[name];

  const lb = after(of('aws_lb')[0]);
  const groups = new Map(of('aws_lb_target_group').map((r) => [keyOf(r), after(r)]));
  const groupLabel = (ref: string | undefined, index: string): string => {
    if (ref === 'aws_security_group.endpoint') return `endpoint ${endpointRoles[index.split('/')[0]].target_role}`;
    return ({ 'aws_security_group.hosts.id': 'hosts', 'aws_security_group.load_balancer.id': 'load balancer', 'var.cluster_security_group_id': 'cluster', 'each.value.source': 'granted client' } as Record<string, string>)[ref ?? ''] ?? `unknown ${ref}`;
  };
  const rules = [...of('aws_vpc_security_group_ingress_rule'), ...of('aws_vpc_security_group_egress_rule')].map((r): SgRule => {
    const a = after(r);
    const block = r.address.replace(/^module\.pooler\./, '').replace(/\[.*\]$/, '');
    const peerRef = references(block, 'referenced_security_group_id')[0];
    return {
      group: groupLabel(references(block, 'security_group_id')[0], keyOf(r)),
      direction: r.type.endsWith('ingress_rule') ? 'ingress' : 'egress',
      protocol: String(a.ip_protocol),
      ports: ports(a.from_port, a.to_port),
      // The S3 prefix list's id is known at apply only (the example's gateway endpoint is made in the same apply).
      peer: peerRef ? groupLabel(peerRef, keyOf(r)) : ((a.cidr_ipv4 as string | null) ?? S3_PREFIX_LIST),
    };
  });

  // The actions of the role's inline policies: each a policy document the plan knows (a data source read at
  // plan, in the prior state, or one that depends on unknown values, in resource_changes) or literal JSON.
  const knownData = new Map(
    (plan as unknown as { prior_state?: { values: { root_module: { child_modules?: Array<{ resources?: Array<{ address: string; values: Props }> }> } } } }).prior_state?.values.root_module.child_modules
      ?.flatMap((m) => m.resources ?? [])
      .map((r) => [r.address, r.values]) ?? [],
  );
  const policyActions = (r: ResourceChange): string[] => {
    const policy = after(r).policy;
    if (typeof policy === 'string') return (JSON.parse(policy) as { Statement: Array<{ Action: string | string[] }> }).Statement.flatMap((st) => [st.Action].flat());
    const document = references(r.address.replace(/^module\.pooler\./, '').replace(/\[.*\]$/, ''), 'policy').find((ref) => ref.startsWith('data.aws_iam_policy_document.') && !ref.endsWith('.json'))!;
    const address = `module.pooler.${document}`;
    const values = (pooler.find((c) => c.address === address)?.change.after ?? knownData.get(address)) as { statement: Array<{ actions: string[] }> };
    return values.statement.flatMap((st) => st.actions);
  };
  // The hosts' role: the instance profile's, and what is attached to it.
  const hostRoleRef = references('aws_iam_instance_profile.host', 'role').find((ref) => ref.startsWith('aws_iam_role.') && ref.split('.').length === 2)!;
  const onHostRole = (r: ResourceChange) => references(r.address.replace(/^module\.pooler\./, '').replace(/\[.*\]$/, ''), 'role').some((ref) => ref.startsWith(`${hostRoleRef}.`));
  const assume = JSON.parse(after(managed.find((r) => r.address === `module.pooler.${hostRoleRef}`)!).assume_role_policy as string) as { Statement: Array<{ Principal: { Service: string } }> };
  // Each secret's first password, drawn at plan by the data source of the same key (server, consumer/<user>).
  const passwords = new Map(
    (plan as unknown as { prior_state: { values: { root_module: { child_modules: Array<{ resources?: Array<{ type: string; index?: string; values: Props }> }> } } } }).prior_state.values.root_module.child_modules
      .flatMap((m) => m.resources ?? [])
      .filter((r) => r.type === 'aws_secretsmanager_random_password')
      .map((r) => [String(r.index), r.values]),
  );

  return {
    counts,
    unmapped,
    group: {
      min: asg.min_size,
      max: asg.max_size,
      desired: asg.desired_capacity,
      healthCheckType: asg.health_check_type,
      healthCheckGracePeriod: asg.health_check_grace_period,
      // Hosts kept in service while a changed launch template rolls out.
      inServiceDuringReplacement: Math.floor((Number(asg.desired_capacity) * Number((refresh.preferences as Props[])[0].min_healthy_percentage)) / 100),
      // How long a new host is given to serve before the rollout fails: CloudFormation waits on its signal
      // (PauseTime), Terraform, which takes no signals, on every host healthy in the target groups.
      serveTimeoutSeconds: Number(String(asg.wait_for_capacity_timeout).replace(/s$/, '')),
      waitsForEveryHost: asg.wait_for_elb_capacity === asg.desired_capacity,
    },
    launchTemplate: {
      instanceType: lt.instance_type,
      imageId: lt.image_id,
      httpEndpoint: metadata.http_endpoint,
      httpTokens: metadata.http_tokens,
      hopLimit: metadata.http_put_response_hop_limit,
      detailedMonitoring: (lt.monitoring as Props[])[0].enabled,
      publicAddress: String((lt.network_interfaces as Props[])[0].associate_public_ip_address) === 'true',
      keyPair: lt.key_name ?? null,
      volume: {
        device: (lt.block_device_mappings as Props[])[0].device_name,
        size: ebs.volume_size,
        type: ebs.volume_type,
        encrypted: String(ebs.encrypted) === 'true',
        deleteOnTermination: String(ebs.delete_on_termination) === 'true',
      },
    },
    userData: substitutePlaceholders(fs.readFileSync(TEMPLATE, 'utf8'), { ...values, ...signalled(variables.after, '') }),
    placeholders: Object.keys(values).sort(),
    loadBalancer: {
      internal: lb.internal,
      type: lb.load_balancer_type,
      crossZone: lb.enable_cross_zone_load_balancing,
      securityGroups: (lb.security_groups as unknown[]).length,
      privateLinkInboundRules: lb.enforce_security_group_inbound_rules_on_private_link_traffic,
    },
    listeners: sorted(
      of('aws_lb_listener').map((r) => {
        const a = after(r);
        return { port: a.port, protocol: a.protocol, idleTimeout: a.tcp_idle_timeout_seconds, targetPort: groups.get(keyOf(r))!.port };
      }),
    ),
    targetGroups: sorted(
      [...groups.values()].map((g) => {
        const check = (g.health_check as Props[])[0];
        return {
          port: g.port,
          protocol: g.protocol,
          targetType: g.target_type,
          deregistrationDelay: Number(g.deregistration_delay),
          healthCheck: { protocol: check.protocol, port: check.port, path: check.path ?? null, interval: check.interval, healthy: check.healthy_threshold, unhealthy: check.unhealthy_threshold },
        };
      }),
    ),
    endpointService: ((s) => ({ acceptanceRequired: s.acceptance_required, principals: (s.allowed_principals as string[]).map(principal), loadBalancers: (s.network_load_balancer_arns as unknown[]).length }))(
      after(of('aws_vpc_endpoint_service')[0]),
    ),
    endpoints: sorted(
      of('aws_vpc_endpoint').map((r) => ({
        role: endpointRoles[keyOf(r)].target_role,
        type: after(r).vpc_endpoint_type,
        privateDns: after(r).private_dns_enabled,
        securityGroups: ((after(r).security_group_ids ?? (r.change.after_unknown as Props).security_group_ids) as unknown[]).length,
      })),
    ),
    rules: sorted(rules),
    hostRole: {
      assumedBy: assume.Statement.map((s) => s.Principal.Service),
      managedPolicies: of('aws_iam_role_policy_attachment').filter(onHostRole).map((r) => String(after(r).policy_arn).replace(/^.*:policy\//, '')),
      actions: uniqueSorted(of('aws_iam_role_policy').filter(onHostRole).flatMap(policyActions)),
    },
    secrets: sorted(
      of('aws_secretsmanager_secret').map((r) => {
        const password = passwords.get(r.address.endsWith('.server') ? 'server' : `consumer/${keyOf(r)}`)!;
        return { description: after(r).description, passwordLength: password.password_length, excludePunctuation: password.exclude_punctuation };
      }),
    ),
  };
}

interface CdkSide {
  inventory: Inventory;
  /** Placeholders whose values CloudFormation knows only at deploy (references to resources). */
  deployTime: Set<string>;
}

/** The fleet the example deploys, as the CDK construct builds it, from the example's defaults and plan. */
function cdkInventory(plan: PlanOfResources): CdkSide {
  const defaults = variableDefaults(path.join(ROOT, 'modules/examples/complete-pgbouncer'));
  const endpoints = plan.output_changes!.endpoints.after as Record<string, { target_role: EndpointRole }>;
  const consumerUsers = plan.resource_changes.filter((r) => r.address.startsWith('module.pooler.aws_secretsmanager_secret.consumer[')).map(keyOf);
  const poolerDefaults = variableDefaults(path.join(ROOT, 'modules/pgbouncer-proxy'));

  const { stack } = newStack('PgBouncerParity');
  const dataVpc = isolatedVpc(stack, 'DataVpc', '10.10.0.0/16');
  const consumerVpc = isolatedVpc(stack, 'ConsumerVpc', '10.20.0.0/16');
  const cluster = new AuroraOptimizedReads(stack, 'Database', { vpc: dataVpc, readers: defaults.readers as number });
  const pooler = new PgBouncerProxy(stack, 'Pooler', {
    cluster,
    packages: { bucket: s3.Bucket.fromBucketName(stack, 'Packages', defaults.packages_bucket as string), key: defaults.packages_key as string },
    hosts: defaults.hosts as number,
    instanceType: defaults.instance_type as string,
    // The example's AMI has no default: the id its plans are given (terraform-cli.ts).
    imageId: EXAMPLE_POOLER_IMAGE_ID,
    // The module's name is its fleet's name.
    fleetName: defaults.name as string,
    tcpIdleTimeout: Duration.seconds(poolerDefaults.tcp_idle_timeout_seconds as number),
    // The example narrows the hosts' HTTPS egress to its data VPC and S3's prefix list when it passes one.
    s3PrefixListId: plan.resource_changes.some((r) => r.address === 'module.pooler.aws_vpc_security_group_egress_rule.hosts_https["s3"]') ? S3_PREFIX_LIST_ID : undefined,
    // The example makes the data VPC's endpoints and passes them in vpc_endpoints; the construct is given endpoints of the user's too.
    apiRoutes: ApiRoutes.BRING_YOUR_OWN,
    vpcEndpoints: {
      s3: ec2.GatewayVpcEndpoint.fromGatewayVpcEndpointId(stack, 'S3', 'vpce-s3'),
      ...Object.fromEntries((['secretsManager', 'monitoring', 'cloudFormation', 'ssm', 'ssmMessages', 'ec2Messages'] as const).map((api) => [api, ec2.InterfaceVpcEndpoint.fromInterfaceVpcEndpointAttributes(stack, api, { vpcEndpointId: `vpce-${api}`, port: 443 })])),
    },
  });
  for (const user of consumerUsers) pooler.addConsumerUser(user);
  const endpointGroups = new Map<string, string>();
  for (const [name, e] of Object.entries(endpoints)) {
    const endpoint = pooler.addEndpoint(name, { vpc: consumerVpc, role: e.target_role });
    // The example's consumers (modules/lambda-consumer) admit themselves on each endpoint's group, outside the module.
    endpointGroups.set(stack.getLogicalId(endpoint.securityGroup.node.defaultChild as CfnResource), `endpoint ${e.target_role}`);
  }

  const resources = Template.fromStack(stack).toJSON().Resources as Record<string, { Type: string; Properties: Props; UpdatePolicy?: Props; CreationPolicy?: Props }>;
  const idOf = (c: { node: { defaultChild?: unknown } }) => stack.getLogicalId(c.node.defaultChild as CfnResource);
  const certificate = new Set(pooler.certificate?.node.findAll() ?? []);
  const mine = new Set(pooler.node.findAll().filter((c): c is CfnResource => c instanceof CfnResource && !certificate.has(c)).map((c) => stack.getLogicalId(c)));
  const labels = new Map<string, string>([
    [idOf(pooler.connections.securityGroups[0] as ec2.SecurityGroup), 'hosts'],
    [idOf(pooler.loadBalancer.connections.securityGroups[0] as ec2.SecurityGroup), 'load balancer'],
    [idOf(cluster.connections.securityGroups[0] as ec2.SecurityGroup), 'cluster'],
    ...endpointGroups,
  ]);
  const of = (type: string) => Object.entries(resources).filter(([id, r]) => mine.has(id) && r.Type === type).map(([id, r]): Props & { id: string } => ({ ...r.Properties, id }));

  const counts: Record<string, number> = {};
  for (const id of mine) if (TYPE_MAP[resources[id].Type]) counts[TYPE_MAP[resources[id].Type]] = (counts[TYPE_MAP[resources[id].Type]] ?? 0) + 1;
  const unmapped = uniqueSorted([...mine].map((id) => resources[id].Type).filter((t) => !TYPE_MAP[t] && !CDK_AS_PROPERTY.includes(t)));

  const [, asgResource] = Object.entries(resources).find(([id, r]) => mine.has(id) && r.Type === 'AWS::AutoScaling::AutoScalingGroup')!;
  const asg = asgResource.Properties;
  const rolling = (asgResource.UpdatePolicy as { AutoScalingRollingUpdate: Props }).AutoScalingRollingUpdate;
  const lt = of('AWS::EC2::LaunchTemplate')[0].LaunchTemplateData as Props;
  const metadata = lt.MetadataOptions as Props;
  const ebs = (lt.BlockDeviceMappings as Props[])[0].Ebs as Props;

  const portOf = (value: unknown): unknown => {
    // The cluster's port, as a reference to the cluster: its Port property.
    const att = value !== null && typeof value === 'object' ? (value as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'] : undefined;
    if (att === undefined) return value;
    return att[1] === 'Endpoint.Port' ? (resources[att[0]].Properties.Port ?? DEPLOY_TIME(att.join('.'))) : DEPLOY_TIME(att.join('.'));
  };

  // The user data: Fn::Base64 of Fn::Sub [template, values]; a value CloudFormation resolves at deploy is a marker.
  const [template, subValues] = ((lt.UserData as Props)['Fn::Base64'] as { 'Fn::Sub': [string, Record<string, unknown>] })['Fn::Sub'];
  const known = (v: unknown) => (typeof v === 'string' ? v : typeof portOf(v) === 'number' ? String(portOf(v)) : undefined);
  const deployTime = new Set(Object.entries(subValues).filter(([, v]) => known(v) === undefined).map(([k]) => k));
  const values = Object.fromEntries(Object.entries(subValues).map(([k, v]) => [k, known(v) ?? DEPLOY_TIME(k)]));

  const lb = of('AWS::ElasticLoadBalancingV2::LoadBalancer')[0];
  const lbAttribute = (key: string) => (lb.LoadBalancerAttributes as Array<{ Key: string; Value: string }>).find((a) => a.Key === key)?.Value;
  const targetGroups = new Map(of('AWS::ElasticLoadBalancingV2::TargetGroup').map((g) => [g.id, g]));
  const attribute = (owner: Props, key: string) => ((owner.TargetGroupAttributes ?? owner.ListenerAttributes) as Array<{ Key: string; Value: string }>).find((a) => a.Key === key)?.Value;

  const label = (value: unknown) => labels.get((((value ?? {}) as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'] ?? [''])[0]) ?? `unknown ${JSON.stringify(value)}`;
  // A CIDR block as the plan has it (the data VPC's, a reference here), or the S3 prefix list.
  const cidrOrPrefixList = (rule: Props): string => {
    if (rule.DestinationPrefixListId !== undefined) return rule.DestinationPrefixListId === S3_PREFIX_LIST_ID ? S3_PREFIX_LIST : `prefix list ${JSON.stringify(rule.DestinationPrefixListId)}`;
    return JSON.stringify(rule.CidrIp) === JSON.stringify(stack.resolve(dataVpc.vpcCidrBlock)) ? '10.10.0.0/16' : String(rule.CidrIp);
  };
  const isFleetGroup = (l: string | undefined) => l === 'hosts' || l === 'load balancer' || (l ?? '').startsWith('endpoint ');
  const rules: SgRule[] = [];
  for (const [id, r] of Object.entries(resources)) {
    const p = r.Properties;
    if (r.Type === 'AWS::EC2::SecurityGroup' && isFleetGroup(labels.get(id))) {
      for (const [direction, list] of [['ingress', p.SecurityGroupIngress], ['egress', p.SecurityGroupEgress]] as const) {
        for (const rule of (list as Props[] | undefined) ?? []) {
          if (rule.Description === 'Disallow all traffic') continue;
          const peer = rule.SourceSecurityGroupId ?? rule.DestinationSecurityGroupId;
          rules.push({ group: labels.get(id)!, direction, protocol: String(rule.IpProtocol), ports: ports(portOf(rule.FromPort), portOf(rule.ToPort)), peer: peer ? label(peer) : cidrOrPrefixList(rule) });
        }
      }
    } else if (r.Type === 'AWS::EC2::SecurityGroupIngress' || r.Type === 'AWS::EC2::SecurityGroupEgress') {
      const group = label(p.GroupId);
      const peer = p.SourceSecurityGroupId ?? p.DestinationSecurityGroupId;
      const rule: SgRule = { group, direction: r.Type.endsWith('Ingress') ? 'ingress' : 'egress', protocol: String(p.IpProtocol), ports: ports(portOf(p.FromPort), portOf(p.ToPort)), peer: peer ? label(peer) : cidrOrPrefixList(p) };
      // The fleet's rules: those of its groups, and the cluster's from its hosts (not the consumer's own).
      if ([rule.group, rule.peer].some(isFleetGroup)) rules.push(rule);
    }
  }

  const role: Props & { id: string } = { ...resources[idOf(pooler.hostRole)].Properties, id: idOf(pooler.hostRole) };
  const policies = of('AWS::IAM::Policy').filter((p) => JSON.stringify(p.Roles).includes(role.id));
  const permissions = Object.values(resources).filter((r) => r.Type === 'AWS::EC2::VPCEndpointServicePermissions').map((r) => r.Properties);
  const joined = (value: unknown): string => {
    const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
    return join ? join[1].map((part) => (typeof part === 'string' ? part : `\${${(part as { Ref: string }).Ref}}`)).join(join[0]) : String(value);
  };

  return {
    deployTime,
    inventory: {
      counts,
      unmapped,
      group: {
        min: Number(asg.MinSize),
        max: Number(asg.MaxSize),
        desired: Number(asg.DesiredCapacity),
        healthCheckType: asg.HealthCheckType,
        healthCheckGracePeriod: asg.HealthCheckGracePeriod,
        inServiceDuringReplacement: rolling.MinInstancesInService,
        serveTimeoutSeconds: rolling.WaitOnResourceSignals === true ? isoSeconds(rolling.PauseTime as string) : undefined,
        waitsForEveryHost: (asgResource.CreationPolicy as { ResourceSignal: { Count: number } }).ResourceSignal.Count === Number(asg.DesiredCapacity),
      },
      launchTemplate: {
        instanceType: lt.InstanceType,
        imageId: lt.ImageId,
        // CloudFormation's default when left out.
        httpEndpoint: metadata.HttpEndpoint ?? 'enabled',
        httpTokens: metadata.HttpTokens,
        hopLimit: metadata.HttpPutResponseHopLimit,
        detailedMonitoring: (lt.Monitoring as Props).Enabled,
        publicAddress: (lt.NetworkInterfaces as Props[])[0].AssociatePublicIpAddress,
        keyPair: lt.KeyName ?? null,
        volume: { device: (lt.BlockDeviceMappings as Props[])[0].DeviceName, size: ebs.VolumeSize, type: ebs.VolumeType, encrypted: ebs.Encrypted, deleteOnTermination: ebs.DeleteOnTermination },
      },
      userData: substitutePlaceholders(template, { ...values, ...signalled(values, 'cdk') }),
      placeholders: Object.keys(values).sort(),
      loadBalancer: {
        internal: lb.Scheme === 'internal',
        type: lb.Type,
        crossZone: lbAttribute('load_balancing.cross_zone.enabled') === 'true',
        securityGroups: (lb.SecurityGroups as unknown[]).length,
        privateLinkInboundRules: lb.EnforceSecurityGroupInboundRulesOnPrivateLinkTraffic,
      },
      listeners: sorted(
        of('AWS::ElasticLoadBalancingV2::Listener').map((l) => ({
          port: l.Port,
          protocol: l.Protocol,
          idleTimeout: Number(attribute(l, 'tcp.idle_timeout.seconds')),
          targetPort: targetGroups.get(((l.DefaultActions as Props[])[0].TargetGroupArn as { Ref: string }).Ref)!.Port,
        })),
      ),
      targetGroups: sorted(
        [...targetGroups.values()].map((g) => ({
          port: g.Port,
          protocol: g.Protocol,
          targetType: g.TargetType,
          deregistrationDelay: Number(attribute(g, 'deregistration_delay.timeout_seconds')),
          healthCheck: {
            protocol: g.HealthCheckProtocol,
            port: g.HealthCheckPort,
            path: g.HealthCheckPath ?? null,
            interval: g.HealthCheckIntervalSeconds,
            healthy: g.HealthyThresholdCount,
            unhealthy: g.UnhealthyThresholdCount,
          },
        })),
      ),
      endpointService: {
        acceptanceRequired: of('AWS::EC2::VPCEndpointService')[0].AcceptanceRequired,
        principals: permissions.flatMap((p) => (p.AllowedPrincipals as unknown[]).map((a) => principal(joined(a).replace('${AWS::Partition}', 'aws').replace('${AWS::AccountId}', 'account')))),
        loadBalancers: (of('AWS::EC2::VPCEndpointService')[0].NetworkLoadBalancerArns as unknown[]).length,
      },
      endpoints: sorted(
        of('AWS::EC2::VPCEndpoint').map((e) => ({
          role: labels.get(((e.SecurityGroupIds as Props[])[0] as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0])!.replace(/^endpoint /, ''),
          type: e.VpcEndpointType,
          privateDns: e.PrivateDnsEnabled,
          securityGroups: (e.SecurityGroupIds as unknown[]).length,
        })),
      ),
      rules: sorted(rules),
      hostRole: {
        assumedBy: (role.AssumeRolePolicyDocument as { Statement: Array<{ Principal: { Service: string } }> }).Statement.map((s) => s.Principal.Service),
        managedPolicies: ((role.ManagedPolicyArns ?? []) as unknown[]).map((a) => joined(a).replace(/^.*:policy\//, '')),
        // Less the hosts' SignalResource on this stack: CloudFormation's alone (Terraform takes no signals;
        // the module waits for healthy capacity instead, compared in group.waitsForEveryHost).
        actions: uniqueSorted(policies.flatMap((p) => (p.PolicyDocument as { Statement: Array<{ Action: string | string[] }> }).Statement.flatMap((s) => [s.Action].flat()))).filter((a) => !(FLEET_SIGNAL_POLICY.actions as ReadonlyArray<string>).includes(a)),
      },
      secrets: sorted(
        of('AWS::SecretsManager::Secret').map((s) => ({
          description: s.Description,
          passwordLength: (s.GenerateSecretString as Props).PasswordLength,
          excludePunctuation: (s.GenerateSecretString as Props).ExcludePunctuation,
        })),
      ),
    },
  };
}

// --- The endpoints of the reference app (CDK) and of examples/complete-pgbouncer (Terraform) -----------

const CDK_CONTEXT = JSON.parse(fs.readFileSync(path.join(ROOT, 'cdk.json'), 'utf8')).context as Record<string, unknown>;

/**
 * The AWS service endpoints of a deployment by `<vpc> <service>` (the fleet's own PrivateLink endpoints
 * are compared above): `default` for the default policy (full access), else each grant the policy makes,
 * one a line, `<effect> <principal> <action> <resource>[ if <condition>]`, in words both flavours share
 * (the host role, the role bootstrap, a consumer's role, each secret, the packages object).
 */
type EndpointPolicies = Record<string, 'default' | string[]>;

interface Grant {
  effect: string;
  principals: string[];
  actions: string[];
  resources: string[];
  conditions: string[];
}

const grants = (statements: Grant[]): string[] =>
  uniqueSorted(
    statements.flatMap((st) =>
      st.principals.flatMap((p) => st.actions.flatMap((a) => st.resources.map((r) => `${st.effect} ${p} ${a} ${r}${st.conditions.length > 0 ? ` if ${[...st.conditions].sort().join(' and ')}` : ''}`))),
    ),
  );

/** The reference app with -c proxyEngine=pgbouncer: its endpoints' policies, and whether its hosts wait for the role bootstrap. */
function cdkEndpoints(): { policies: EndpointPolicies; hostsWaitForRoles: boolean } {
  const app = new App({ context: { ...CDK_CONTEXT, proxyEngine: 'pgbouncer', 'aws:cdk:bundling-stacks': [] } });
  const settings = readDeploymentContext(app);
  const stack = new ReferenceDeployment(app, settings.stackName, settings);
  const tier = stack.pgBouncer!;
  const pooler = tier.proxy;
  const resources = Template.fromStack(stack).toJSON().Resources as Record<string, { Type: string; Properties: Props; DependsOn?: string[] }>;
  const labels = new Map<string, string>(
    (
      [
        [pooler.hostRole.roleArn, 'host role'],
        [stack.databaseRoles.function.role!.roleArn, 'role bootstrap'],
        [stack.reader.function.role!.roleArn, `consumer ${READER_DB_USER}`],
        [stack.writer.function.role!.roleArn, `consumer ${WRITER_DB_USER}`],
        [stack.database.masterSecret.secretArn, 'master secret'],
        [pooler.readOnlyServerSecret.secretArn, 'server secret'],
        [pooler.tlsSecret.secretArn, 'tls secret'],
        ...pooler.consumerUsers.map((u) => [pooler.consumerUserSecret(u).secretArn, `${u} secret`]),
        [tier.packagesBucket.arnForObjects(POOLER_PACKAGES_KEY), 'packages object'],
      ] as Array<[string, string]>
    ).map(([token, label]) => [JSON.stringify(stack.resolve(token)), label]),
  );
  const label = (value: unknown): string => labels.get(JSON.stringify(value)) ?? (typeof value === 'string' ? value : `unknown ${JSON.stringify(value)}`);
  const vpcs = new Map([
    [JSON.stringify(ref(stack.dataVpc)), 'data'],
    [JSON.stringify(ref(stack.consumerVpc)), 'consumer'],
  ]);

  const policies: EndpointPolicies = {};
  for (const r of Object.values(resources).filter((x) => x.Type === 'AWS::EC2::VPCEndpoint')) {
    // com.amazonaws.<region>.<service>; the fleet's endpoints name its endpoint service instead.
    const last = ((r.Properties.ServiceName as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1] as unknown[]).at(-1);
    if (typeof last !== 'string' || !last.startsWith('.')) continue;
    const doc = r.Properties.PolicyDocument as { Statement: Array<Record<string, unknown>> } | undefined;
    const list = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
    policies[`${vpcs.get(JSON.stringify(r.Properties.VpcId))} ${last.slice(1)}`] = doc
      ? grants(
          doc.Statement.map((st) => ({
            effect: String(st.Effect),
            principals: st.Principal === '*' ? ['*'] : Object.entries(st.Principal as Record<string, unknown>).flatMap(([type, ids]) => list(ids).map((id) => `${type} ${label(id)}`)),
            actions: list(st.Action) as string[],
            resources: list(st.Resource).map(label),
            conditions: Object.entries((st.Condition ?? {}) as Record<string, Record<string, unknown>>).flatMap(([test, byKey]) => Object.entries(byKey).map(([key, values]) => `${test} ${key} ${list(values).map(label).sort().join(',')}`)),
          })),
        )
      : 'default';
  }
  const hostsWaitForRoles = (resources[logicalIdOf(pooler.autoScalingGroup)].DependsOn ?? []).includes(logicalIdOf(stack.databaseRoles.resource));
  return { policies, hostsWaitForRoles };
}

const hasUnknown = (value: unknown): boolean => value === true || (value !== null && typeof value === 'object' && Object.values(value).some(hasUnknown));

/** The example's endpoints' policies, from its plan: a value known at plan as it is, one known only at apply by what its expression references. */
function terraformEndpointPolicies(plan: PlanOfResources): EndpointPolicies {
  type Expressions = Record<string, unknown>;
  const root = plan.configuration.root_module.resources as ReadonlyArray<{ address: string; expressions?: Expressions }>;
  const config = (address: string) => root.find((c) => c.address === address.replace(/\[.*\]$/, ''))!.expressions ?? {};
  const refs = (expression: unknown): string[] => (expression as { references?: string[] } | undefined)?.references ?? [];
  const known = (plan as unknown as { prior_state?: { values: { root_module: { resources?: Array<{ address: string; values: Props }> } } } }).prior_state?.values.root_module.resources ?? [];
  const defaults = variableDefaults(path.join(ROOT, 'modules/examples/complete-pgbouncer'));
  const consumerUsers = plan.resource_changes.filter((r) => r.address.startsWith('module.pooler.aws_secretsmanager_secret.consumer[')).map(keyOf);
  // Each consumer's database user, as its function logs in.
  const dbUserOf = Object.fromEntries(
    plan.resource_changes
      .filter((r) => /^module\.consumer\["\w+"\]\.module\.function\.aws_lambda_function\.this$/.test(r.address))
      .map((r) => [/\["(\w+)"\]/.exec(r.address)![1], (r.change.after!.environment as Array<{ variables: Record<string, string> }>)[0].variables.DB_USER]),
  );
  const knownLabels = new Map([[`arn:aws:s3:::${String(defaults.packages_bucket)}/${String(defaults.packages_key)}`, 'packages object']]);
  // What an expression known only at apply stands for, by the module outputs it references.
  const byReference = (references: string[]): string[] => {
    const user = references.map((x) => /^local\.db_users\.(\w+)$/.exec(x)?.[1]).find((x) => x !== undefined);
    const meaning = (x: string): string[] | undefined => {
      const consumer = /^module\.consumer\["(\w+)"\]\.role_arn$/.exec(x);
      if (consumer) return [`consumer ${dbUserOf[consumer[1]]}`];
      return (
        {
          'module.pooler.host_role_arn': ['host role'],
          'module.database_roles.role_arn': ['role bootstrap'],
          'module.database.master_user_secret_arn': ['master secret'],
          'module.pooler.read_only_server_secret_arn': ['server secret'],
          'module.pooler.tls_secret_arn': ['tls secret'],
          // A whole map (values()) is every consumer's secret; one indexed by local.db_users.<consumer> is that consumer's.
          'module.pooler.consumer_secret_arns': (user ? [dbUserOf[user]] : consumerUsers).map((u) => `${u} secret`),
        } as Record<string, string[]>
      )[x];
    };
    // References are listed with their prefixes (module.pooler for module.pooler.x); the index local is read above.
    const meant = references.filter((x) => !references.some((o) => o !== x && o.startsWith(`${x}.`)) && !references.some((o) => o !== x && o.startsWith(`${x}[`)) && !/^local\.db_users\.\w+$/.test(x));
    return uniqueSorted(meant.flatMap((x) => meaning(x) ?? [`unknown ${x}`]));
  };

  const policies: EndpointPolicies = {};
  for (const r of plan.resource_changes.filter((c) => c.type === 'aws_vpc_endpoint' && c.mode === 'managed' && !c.address.startsWith('module.'))) {
    const expressions = config(r.address);
    const vpc = refs(expressions.vpc_id).map((x) => /^aws_vpc\.this\["(\w+)"\]$/.exec(x)?.[1]).find((x) => x !== undefined);
    const key = `${vpc} ${String(r.change.after!.service_name).split('.').at(-1)}`;
    if (expressions.policy === undefined) {
      policies[key] = 'default';
      continue;
    }
    const document = refs(expressions.policy).find((x) => /^data\.aws_iam_policy_document\.\w+$/.test(x));
    if (document === undefined) throw new Error(`${r.address}: a policy that is not a data.aws_iam_policy_document's json`);
    // Read at plan (in the prior state) when all its inputs are known, else at apply (in resource_changes).
    const deferred = plan.resource_changes.find((c) => c.address === document);
    const after = (deferred?.change.after ?? known.find((k) => k.address === document)!.values) as { statement: Array<Record<string, unknown>> };
    const unknown = ((deferred?.change.after_unknown ?? {}) as { statement?: Array<Record<string, unknown>> }).statement ?? [];
    const statementsConfig = config(document).statement as Expressions[];
    // A value as planned, or by its references where the plan marks it unknown.
    const valuesOf = (value: string[], unknownMarks: unknown, expression: unknown): string[] => (hasUnknown(unknownMarks) ? byReference(refs(expression)) : value.map((v) => knownLabels.get(v) ?? v));
    policies[key] = grants(
      after.statement.map((st, i) => {
        const marks = unknown[i] ?? {};
        const blocks = (name: string) => ({ marks: (marks[name] as Array<Record<string, unknown>> | undefined) ?? [], config: statementsConfig[i][name] as Expressions[] });
        const principals = blocks('principals');
        const conditions = blocks('condition');
        return {
          effect: (st.effect as string | null) ?? 'Allow',
          principals: (st.principals as Array<{ type: string; identifiers: string[] }>).flatMap((p, j) =>
            p.type === '*' ? ['*'] : valuesOf(p.identifiers, principals.marks[j]?.identifiers, principals.config[j].identifiers).map((id) => `${p.type} ${id}`),
          ),
          actions: st.actions as string[],
          resources: valuesOf(st.resources as string[], marks.resources, statementsConfig[i].resources),
          conditions: (st.condition as Array<{ test: string; variable: string; values: string[] }>).map(
            (c, k) => `${c.test} ${c.variable} ${valuesOf(c.values, conditions.marks[k]?.values, conditions.config[k].values).sort().join(',')}`,
          ),
        };
      }),
    );
  }
  return policies;
}

/**
 * Where the hosts signal, the one part of the user data the flavours differ in on purpose: CloudFormation's
 * stack, group and Region (it waits on the signals), and nothing in Terraform (the module waits for healthy
 * capacity). Checked here for what each flavour must give, then compared as one marker.
 */
function signalled(values: Record<string, string>, flavour: 'cdk' | ''): Record<string, string> {
  const signal = { SignalStack: values.SignalStack, SignalResource: values.SignalResource, SignalRegion: values.SignalRegion };
  if (flavour === 'cdk') expect(signal).toEqual({ SignalStack: DEPLOY_TIME('SignalStack'), SignalResource: expect.stringMatching(/^PoolerHosts/), SignalRegion: DEPLOY_TIME('SignalRegion') });
  else expect(signal).toEqual({ SignalStack: '', SignalResource: '', SignalRegion: '' });
  return { SignalStack: '<the stack, in CloudFormation only>', SignalResource: '<the group, in CloudFormation only>', SignalRegion: '<the Region, in CloudFormation only>' };
}

describe('PgBouncerProxy and modules/pgbouncer-proxy (as examples/complete-pgbouncer calls it)', () => {
  let plan: PlanOfResources;
  let cdk: Inventory;
  let tf: Inventory;
  const example = new TerraformDir(path.join(ROOT, 'modules/examples/complete-pgbouncer'));

  beforeAll(() => {
    // GIVEN the example planned, and the construct built with the example's inputs
    plan = example.planJson();
    const side = cdkInventory(plan);
    cdk = side.inventory;
    tf = terraformInventory(plan, side.deployTime);
  }, 300_000);
  afterAll(() => example.dispose());

  test('the example passes the module no input the construct is not given here', () => {
    const passed = Object.keys((plan.configuration.root_module as unknown as { module_calls: Record<string, { expressions: Props }> }).module_calls.pooler.expressions);
    // Inputs the construct takes from the cluster, the VPC and the packages/TLS objects (its certificate function is
    // the package's own handler), or that this test passes on; hosts_depend_on is the reference app's dependency of
    // the construct's Auto Scaling group on the role bootstrap (compared below); vpc_cidr_block is the VPC's, which
    // the construct reads from the cluster's VPC, and s3_prefix_list_id its s3PrefixListId.
    const mirrored = ['name', 'vpc_id', 'subnet_ids', 'cluster_security_group_id', 'cluster_endpoint', 'reader_endpoints', 'writer_instance_endpoint', 'server_port', 'database_name', 'max_connections', 'packages_bucket', 'packages_key', 'tls_secret_arn', 'certificate_function', 'hosts', 'instance_type', 'consumer_users', 'endpoints', 'hosts_depend_on', 'vpc_cidr_block', 's3_prefix_list_id', 'image_id', 'vpc_endpoints'];
    expect(passed.filter((p) => !mirrored.includes(p))).toEqual([]);
  });

  test('the same resources per kind, and none of a kind the comparison does not know', () => {
    expect(tf.counts).toEqual(cdk.counts);
    expect(Object.keys(cdk.counts).sort()).toEqual(Object.values(TYPE_MAP).sort());
    expect({ cdk: cdk.unmapped, terraform: tf.unmapped }).toEqual({ cdk: [], terraform: [] });
  });

  test.each(['group', 'launchTemplate', 'loadBalancer', 'listeners', 'targetGroups', 'endpointService', 'endpoints', 'rules', 'hostRole', 'secrets'] as const)('the same %s', (key) => {
    expect(tf[key]).toEqual(cdk[key]);
  });

  describe('the reference app (CDK) and the example: the endpoints the hosts and consumers call', () => {
    let reference: ReturnType<typeof cdkEndpoints>;
    beforeAll(() => {
      // GIVEN the reference app with -c proxyEngine=pgbouncer, beside the example's plan
      reference = cdkEndpoints();
    }, 120_000);

    test('the same endpoints with the same policies: what each principal may do on what through each', () => {
      // WHEN each flavour's endpoint policies are put in shared words
      const terraform = terraformEndpointPolicies(plan);
      // THEN they are the same, but for CloudFormation's endpoint, which only the CDK flavour's signals need
      // (Terraform takes none), and they are the restricted ones (not a default that both might share)
      const { 'data cloudformation': signals, ...shared } = reference.policies as Record<string, unknown>;
      expect(signals).toEqual(['Allow AWS host role cloudformation:SignalResource unknown {"Ref":"AWS::StackId"}']);
      expect(terraform).toEqual(shared);
      const host = 'Allow AWS host role secretsmanager:GetSecretValue';
      const bootstrap = 'Allow AWS role bootstrap secretsmanager:GetSecretValue';
      expect(shared).toEqual({
        'data s3': ['Allow * s3:GetObject packages object if StringEquals aws:PrincipalArn host role'],
        'data secretsmanager': [
          'Allow AWS role bootstrap secretsmanager:DescribeSecret master secret',
          `${bootstrap} app_reader secret`,
          `${bootstrap} app_writer secret`,
          `${bootstrap} master secret`,
          `${bootstrap} server secret`,
          `${host} app_reader secret`,
          `${host} app_writer secret`,
          `${host} server secret`,
          `${host} tls secret`,
        ].sort(),
        'data monitoring': ['Allow AWS host role cloudwatch:PutMetricData * if StringEquals cloudwatch:namespace AuroraProxyKit/PgBouncer'],
        'data ssm': 'default',
        'data ssmmessages': 'default',
        'data ec2messages': 'default',
        'consumer secretsmanager': [
          'Allow AWS consumer app_reader secretsmanager:DescribeSecret app_reader secret',
          'Allow AWS consumer app_reader secretsmanager:GetSecretValue app_reader secret',
          'Allow AWS consumer app_writer secretsmanager:DescribeSecret app_writer secret',
          'Allow AWS consumer app_writer secretsmanager:GetSecretValue app_writer secret',
        ],
      });
    });

    test('the hosts start once the role bootstrap has run, in both flavours', () => {
      // CDK: the Auto Scaling group depends on the role bootstrap's custom resource.
      expect(reference.hostsWaitForRoles).toBe(true);
      // Terraform: the group depends on hosts_depend_on, which the example gives the bootstrap's roles output,
      // an output known once the bootstrap's invocation has run.
      type Call = { expressions: Record<string, { references?: string[] }>; module: { resources: Array<{ address: string; depends_on?: string[] }>; outputs: Record<string, { expression: { references?: string[] } }> } };
      const calls = (plan.configuration.root_module as unknown as { module_calls: Record<string, Call> }).module_calls;
      expect(calls.pooler.module.resources.find((r) => r.address === 'aws_autoscaling_group.this')!.depends_on).toContain('var.hosts_depend_on');
      expect(calls.pooler.expressions.hosts_depend_on.references).toContain('module.database_roles.roles');
      expect(calls.database_roles.module.outputs.roles.expression.references).toContain('aws_lambda_invocation.this');
    });
  });

  test('the same user data once each flavour substitutes its values (deploy-time references by name)', () => {
    expect(tf.placeholders).toEqual(cdk.placeholders);
    expect(tf.userData).toBe(cdk.userData);
    expect(cdk.userData).not.toMatch(/\$\{[A-Za-z0-9]+\}/);
  });
});
