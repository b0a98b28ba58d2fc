import { Annotations, Aws, CfnElement, CfnParameter, Duration, Fn, Lazy, Stack, Token, Validations } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { BOOTSTRAP_PLACEHOLDERS } from '../model/pgbouncer-bootstrap';
import { DEFAULT_FLEET_MAX_CLIENT_CONNECTIONS, FLEET_HOST_WARMUP_SECONDS, type PoolerFleetSpec } from '../model/pgbouncer-fleet';
import { securityGroupDescription } from '../model/aws-facts';
import { POOLER_IMAGE_LOOKUP, SESSION_MANAGER_INSTANCE_POLICY } from '../model/pgbouncer-hosts';
import { POOLER_METRICS_NAMESPACE, POOLER_METRICS_POLICY } from '../model/pgbouncer-metrics';
import { FLEET_HOST_SIGNAL_TIMEOUT_SECONDS, FLEET_SIGNAL_POLICY } from '../model/pgbouncer-rollout';
import type { AuroraOptimizedReads } from '../aurora-optimized-reads';
import type { PgBouncerPackages } from '../pgbouncer-packages';
import { skipCheckov } from './checkov';

/** What a PgBouncerProxy's hosts are made from: its props, validated and with their defaults. */
export interface PgBouncerHostGroupProps {
  readonly cluster: AuroraOptimizedReads;
  readonly packages: PgBouncerPackages;
  readonly vpcSubnets: ec2.SubnetSelection;
  readonly instanceType: string;
  /** The hosts' AMI; a CloudFormation parameter the deployer sets when undefined. */
  readonly imageId?: string;
  readonly fleet: PoolerFleetSpec;
  /** The Fleet dimension of the hosts' metrics. */
  readonly fleetName: string;
  /** The user data template (renderPoolerBootstrap); the group substitutes its placeholders. */
  readonly userDataTemplate: string;
  /** The read-only listener's server role and its password secret. */
  readonly serverUser: string;
  readonly serverSecret: secretsmanager.ISecret;
  /** The consumers' secret ARNs, separated by spaces: a Lazy, as consumers may be added after construction. */
  readonly consumerSecretArns: string;
  /** The listeners' TLS secret ARN: a Lazy, as the certificate is made after the load balancer. */
  readonly tlsSecretArn: string;
  /** The session listeners (sessionListenersValue): a Lazy, as the endpoints that add them come later. */
  readonly sessionListeners: string;
  readonly s3PrefixListId?: string;
}

/** The hosts of a PgBouncerProxy. */
export interface PgBouncerHostGroup {
  readonly hostRole: iam.Role;
  /** Network access to the hosts (the load balancer reaches them; they reach the cluster). */
  readonly connections: ec2.Connections;
  readonly launchTemplate: ec2.LaunchTemplate;
  readonly autoScalingGroup: autoscaling.AutoScalingGroup;
}

/**
 * Adds the hosts of a PgBouncerProxy to `scope` (the proxy itself, so its construct ids and logical ids
 * are the proxy's): their role, security group, launch template and Auto Scaling group of fixed size.
 */
export function addPgBouncerHostGroup(scope: Construct, props: PgBouncerHostGroupProps): PgBouncerHostGroup {
  const { cluster, packages, fleet } = props;
  const vpc = cluster.cluster.vpc;

  // The grants below are each on one resource, but Session Manager's (no AWS-managed policy: see SESSION_MANAGER_INSTANCE_POLICY).
  const hostRole = new iam.Role(scope, 'HostRole', {
    assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com'),
    description: `PgBouncer hosts of ${scope.node.path}`,
  });
  // Session Manager for shell access (no key pair, no SSH): the SSM Agent's own calls only.
  hostRole.addToPrincipalPolicy(new iam.PolicyStatement({ actions: [...SESSION_MANAGER_INSTANCE_POLICY.actions], resources: ['*'] }));
  skipCheckov(hostRole.node.findChild('DefaultPolicy'), [{
    id: 'CKV_AWS_111',
    comment: 'Session Manager\'s instance actions (ssm:UpdateInstanceInformation, the ssmmessages channels) are on * in AWS\'s minimal Session Manager policy; PutMetricData has the cloudwatch:namespace condition',
  }]);
  props.serverSecret.grantRead(hostRole);
  hostRole.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [packages.bucket.arnForObjects(packages.key)] }));
  packages.bucket.encryptionKey?.grantDecrypt(hostRole);
  // The exporter's datapoints, in the engine's namespace only.
  hostRole.addToPrincipalPolicy(new iam.PolicyStatement({ actions: [...POOLER_METRICS_POLICY.actions], resources: ['*'], conditions: { StringEquals: { [POOLER_METRICS_POLICY.conditionKey]: POOLER_METRICS_NAMESPACE } } }));
  // The hosts' signals (pgbouncer-rollout.ts): this stack only, by its id (a stack of the same name made later is another).
  hostRole.addToPrincipalPolicy(new iam.PolicyStatement({ actions: [...FLEET_SIGNAL_POLICY.actions], resources: [Aws.STACK_ID] }));
  Validations.of(hostRole).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason: 'cloudwatch:PutMetricData has no resource-level permissions (the cloudwatch:namespace condition limits it to the PgBouncer engine\'s namespace); Session Manager\'s instance actions are on "*" in AWS\'s minimal policy',
  });

  const hostsGroup = new ec2.SecurityGroup(scope, 'HostSecurityGroup', { vpc, description: securityGroupDescription((p) => `PgBouncer hosts of ${p}`, scope.node.path), allowAllOutbound: false });
  const connections = new ec2.Connections({ securityGroups: [hostsGroup] });
  // The servers: the cluster admits the hosts on its port (and the hosts may reach it).
  cluster.connections.allowDefaultPortFrom(connections, 'PgBouncer hosts');
  // HTTPS to Secrets Manager, SSM and S3: the VPC's interface endpoints, and S3's gateway endpoint.
  if (props.s3PrefixListId === undefined) {
    hostsGroup.addEgressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(443), 'HTTPS to the VPC endpoints (an isolated VPC has no other route)');
  } else {
    hostsGroup.addEgressRule(ec2.Peer.ipv4(vpc.vpcCidrBlock), ec2.Port.tcp(443), 'HTTPS to the VPC interface endpoints');
    hostsGroup.addEgressRule(ec2.Peer.prefixList(props.s3PrefixListId), ec2.Port.tcp(443), 'HTTPS to S3 through the gateway endpoint');
  }

  const launchTemplate: ec2.LaunchTemplate = new ec2.LaunchTemplate(scope, 'LaunchTemplate', {
    instanceType: new ec2.InstanceType(props.instanceType),
    // Pinned: a new image replaces every host, so it changes only when the user changes it.
    machineImage: pinnedImage(props.imageId ?? imageParameter(scope).valueAsString),
    // The group's logical id is known once the group exists (below): a Lazy, resolved at synth.
    userData: ec2.UserData.custom(Fn.sub(props.userDataTemplate, { ...bootstrapVariables(props), ...signalVariables((): autoscaling.AutoScalingGroup => autoScalingGroup) })),
    role: hostRole,
    securityGroup: hostsGroup,
    // IMDSv2 only, one hop: a process in a container on the host cannot reach the role's credentials.
    httpTokens: ec2.LaunchTemplateHttpTokens.REQUIRED,
    httpPutResponseHopLimit: 1,
    requireImdsv2: true,
    associatePublicIpAddress: false,
    detailedMonitoring: true,
    // Debian's images boot from /dev/xvda; the volume holds only the OS and PgBouncer's packages.
    blockDevices: [{ deviceName: '/dev/xvda', volume: ec2.BlockDeviceVolume.ebs(8, { encrypted: true, volumeType: ec2.EbsDeviceVolumeType.GP3, deleteOnTermination: true }) }],
  });

  const autoScalingGroup: autoscaling.AutoScalingGroup = new autoscaling.AutoScalingGroup(scope, 'Hosts', {
    vpc,
    vpcSubnets: props.vpcSubnets,
    launchTemplate,
    minCapacity: fleet.hosts,
    maxCapacity: fleet.hosts,
    desiredCapacity: fleet.hosts,
    // Created only once every host has signalled that both its listeners serve (pgbouncer-rollout.ts).
    signals: autoscaling.Signals.waitForCount(fleet.hosts, { timeout: Duration.seconds(FLEET_HOST_SIGNAL_TIMEOUT_SECONDS) }),
    // A changed launch template (a new pinned version) replaces the hosts one at a time, the next old one
    // going only once the new one has signalled SUCCESS; a FAILURE, or no signal within PauseTime, stops the
    // update at that host and CloudFormation rolls back. Scaling processes that would replace or add hosts
    // meanwhile stay suspended (CDK's default list: HealthCheck, ReplaceUnhealthy, AZRebalance,
    // AlarmNotification, ScheduledActions, InstanceRefresh).
    updatePolicy: autoscaling.UpdatePolicy.rollingUpdate({
      maxBatchSize: 1,
      minInstancesInService: fleet.hosts - 1,
      minSuccessPercentage: 100,
      waitOnResourceSignals: true,
      pauseTime: Duration.seconds(FLEET_HOST_SIGNAL_TIMEOUT_SECONDS),
    }),
    // EC2's checks only: the load balancer's fail on every host at once when Aurora's servers do (FLEET_HOST_HEALTH_CHECK_TYPE).
    healthChecks: autoscaling.HealthChecks.ec2({ gracePeriod: Duration.seconds(FLEET_HOST_WARMUP_SECONDS) }),
  });
  Annotations.of(autoScalingGroup).acknowledgeWarning('@aws-cdk/aws-autoscaling:desiredCapacitySet', 'the fleet is of fixed size by design: every deploy sets it back');
  Validations.of(autoScalingGroup).acknowledge({
    id: 'AwsSolutions-AS3',
    reason: 'the fleet is fixed in size; a replaced host shows in the load balancer\'s target health, which the dashboard will watch',
  });

  return { hostRole, connections, launchTemplate, autoScalingGroup };
}

/** The user data's Fn::Sub variables: a value for every placeholder of the bootstrap template. */
function bootstrapVariables(props: PgBouncerHostGroupProps): Record<string, string> {
  const { cluster, fleet, packages } = props;
  const pool = fleet.pool;
  return {
    [name(BOOTSTRAP_PLACEHOLDERS.clusterEndpoint)]: cluster.cluster.clusterEndpoint.hostname,
    // Each reader's instance endpoint (instanceEndpoints lists the writer first).
    [name(BOOTSTRAP_PLACEHOLDERS.readerEndpoints)]: Fn.join(' ', cluster.cluster.instanceEndpoints.slice(1).map((e) => e.hostname)),
    [name(BOOTSTRAP_PLACEHOLDERS.writerInstanceEndpoint)]: cluster.cluster.instanceEndpoints[0]!.hostname,
    [name(BOOTSTRAP_PLACEHOLDERS.databaseName)]: cluster.databaseName,
    [name(BOOTSTRAP_PLACEHOLDERS.serverPort)]: Token.asString(cluster.cluster.clusterEndpoint.port),
    [name(BOOTSTRAP_PLACEHOLDERS.serverUser)]: props.serverUser,
    [name(BOOTSTRAP_PLACEHOLDERS.hosts)]: String(fleet.hosts),
    [name(BOOTSTRAP_PLACEHOLDERS.vcpus)]: String(fleet.vcpusPerHost),
    [name(BOOTSTRAP_PLACEHOLDERS.maxConnections)]: String(fleet.maxConnections),
    [name(BOOTSTRAP_PLACEHOLDERS.maxConnectionsPercent)]: String(pool.maxConnectionsPercent),
    [name(BOOTSTRAP_PLACEHOLDERS.maxIdleConnectionsPercent)]: String(pool.maxIdleConnectionsPercent),
    [name(BOOTSTRAP_PLACEHOLDERS.borrowTimeoutSeconds)]: String(pool.connectionBorrowTimeoutSeconds),
    [name(BOOTSTRAP_PLACEHOLDERS.maxClientConnections)]: String(DEFAULT_FLEET_MAX_CLIENT_CONNECTIONS),
    [name(BOOTSTRAP_PLACEHOLDERS.tcpIdleTimeoutSeconds)]: String(fleet.tcpIdleTimeoutSeconds),
    [name(BOOTSTRAP_PLACEHOLDERS.packagesBucket)]: packages.bucket.bucketName,
    [name(BOOTSTRAP_PLACEHOLDERS.packagesKey)]: packages.key,
    [name(BOOTSTRAP_PLACEHOLDERS.serverSecretArn)]: props.serverSecret.secretArn,
    [name(BOOTSTRAP_PLACEHOLDERS.consumerSecretArns)]: props.consumerSecretArns,
    [name(BOOTSTRAP_PLACEHOLDERS.tlsSecretArn)]: props.tlsSecretArn,
    [name(BOOTSTRAP_PLACEHOLDERS.fleetName)]: props.fleetName,
    [name(BOOTSTRAP_PLACEHOLDERS.sessionListeners)]: props.sessionListeners,
    [name(BOOTSTRAP_PLACEHOLDERS.sessionMaxConnectionsPercent)]: String(fleet.sessionMaxConnectionsPercent),
  };
}

/**
 * The deployer's AMI id, kept by CloudFormation between deploys (`cdk deploy` reuses a parameter's previous
 * value), so a deploy that does not pass another never moves the hosts to a new image. No default: Debian's
 * latest-image parameter as a default would be resolved at every deploy (pgbouncer-hosts.ts).
 */
function imageParameter(scope: Construct): CfnParameter {
  return new CfnParameter(scope, 'ImageId', {
    type: 'AWS::EC2::Image::Id',
    description: `The PgBouncer hosts' AMI (Debian 13 arm64) of ${scope.node.path}, pinned: ${POOLER_IMAGE_LOOKUP}; a new id replaces every host, one at a time`,
  });
}

/** An AMI by id (a token or a literal): no lookup at synth, none at deploy. */
function pinnedImage(imageId: string): ec2.IMachineImage {
  return { getImage: () => ({ imageId, osType: ec2.OperatingSystemType.LINUX, userData: ec2.UserData.forLinux() }) };
}

/** Where the hosts signal: this stack, the group's logical id (a Lazy: the group is made after the template), this Region. */
function signalVariables(group: () => autoscaling.AutoScalingGroup): Record<string, string> {
  return {
    [name(BOOTSTRAP_PLACEHOLDERS.signalStack)]: Aws.STACK_NAME,
    [name(BOOTSTRAP_PLACEHOLDERS.signalResource)]: Lazy.string({ produce: () => Stack.of(group()).getLogicalId(group().node.defaultChild as CfnElement) }),
    [name(BOOTSTRAP_PLACEHOLDERS.signalRegion)]: Aws.REGION,
  };
}

/** A placeholder's name: `${Name}` -> `Name`. */
function name(placeholder: string): string {
  return placeholder.slice(2, -1);
}
