import { Aws, Duration, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { EndpointRole, securityGroupDescription } from '../model';
import { FLEET_PORTS, fleetListenerOf, fleetListenerPoolMode, fleetListenerRole, type FleetListener } from '../model/pgbouncer-fleet';
import { poolerListenerPort } from '../model/pgbouncer-hosts';
import { PoolMode } from '../model/pgbouncer-ini';
import { POOLER_HEALTH_CHECK, POOLER_HEALTH_PATHS, POOLER_HEALTH_PORT } from '../model/pgbouncer-host-serve';
import { skipCheckov } from './checkov';

/** What a PgBouncerProxy's load balancer is put in front of. */
export interface PgBouncerLoadBalancerProps {
  readonly vpc: ec2.IVpc;
  readonly vpcSubnets: ec2.SubnetSelection;
  /** The hosts: the targets of both listeners. */
  readonly hosts: elbv2.INetworkLoadBalancerTarget;
  /** The hosts' network access, which admits the load balancer on the listeners' and health checks' ports. */
  readonly hostConnections: ec2.Connections;
  /** The listeners' TCP idle timeout. */
  readonly tcpIdleTimeout: Duration;
}

/** The load balancer of a PgBouncerProxy and what offers it to consumer VPCs. */
export interface PgBouncerLoadBalancer {
  readonly loadBalancer: elbv2.NetworkLoadBalancer;
  /** The load balancer's security group, which the hosts admit on each listener's port. */
  readonly loadBalancerGroup: ec2.ISecurityGroup;
  /** The target group of each listener's role. */
  readonly targetGroups: ReadonlyMap<EndpointRole, elbv2.NetworkTargetGroup>;
  readonly endpointService: ec2.VpcEndpointService;
}

/**
 * Adds the internal Network Load Balancer of a PgBouncerProxy to `scope` (the proxy itself, so its
 * construct ids and logical ids are the proxy's): its security group, a TCP listener and target group per
 * role (read/write on 5432, read-only on 5433), and the VPC endpoint service that offers it to consumer VPCs.
 */
export function addPgBouncerLoadBalancer(scope: Construct, props: PgBouncerLoadBalancerProps): PgBouncerLoadBalancer {
  const { vpc, vpcSubnets, hostConnections } = props;
  const loadBalancerGroup = new ec2.SecurityGroup(scope, 'LoadBalancerSecurityGroup', { vpc, description: securityGroupDescription((p) => `PgBouncer load balancer of ${p}`, scope.node.path), allowAllOutbound: false });
  const loadBalancer = new elbv2.NetworkLoadBalancer(scope, 'LoadBalancer', {
    vpc,
    vpcSubnets,
    internetFacing: false,
    crossZoneEnabled: true,
    // Set at creation: a load balancer created without a security group cannot get one later.
    securityGroups: [loadBalancerGroup],
    // Consumers come through PrivateLink only; who may is decided by the endpoint service's principals
    // and each interface endpoint's own security group (their addresses are in other VPCs).
    enforceSecurityGroupInboundRulesOnPrivateLinkTraffic: false,
  });
  Validations.of(loadBalancer).acknowledge({
    id: 'AwsSolutions-ELB2',
    reason: 'a Network Load Balancer writes access logs for TLS listeners only; these are TCP (PgBouncer terminates TLS), so logs would stay empty',
  });
  skipCheckov(loadBalancer, [{ id: 'CKV_AWS_91', comment: 'a Network Load Balancer writes access logs for TLS listeners only; these are TCP (PgBouncer terminates TLS)' }]);
  hostConnections.allowFrom(loadBalancerGroup, ec2.Port.tcp(POOLER_HEALTH_PORT), 'health checks of both listeners (the health endpoint of the hosts)');
  const targetGroups = new Map<EndpointRole, elbv2.NetworkTargetGroup>();
  for (const role of [EndpointRole.READ_WRITE, EndpointRole.READ_ONLY]) {
    targetGroups.set(role, addPgBouncerListener({ ...props, loadBalancer, loadBalancerGroup }, fleetListenerOf(role)));
  }

  const endpointService = new ec2.VpcEndpointService(scope, 'EndpointService', {
    vpcEndpointServiceLoadBalancers: [loadBalancer],
    // Only this account may connect; its endpoints are accepted without a manual step.
    acceptanceRequired: false,
    allowedPrincipals: [new iam.ArnPrincipal(`arn:${Aws.PARTITION}:iam::${Aws.ACCOUNT_ID}:root`)],
  });
  skipCheckov(endpointService.node.findChild('EndpointService'), [{
    id: 'CKV_AWS_123',
    comment: 'only this account may connect (allowed principals); its endpoints are made by the same deploy, which a manual acceptance would stall',
  }]);

  return { loadBalancer, loadBalancerGroup, targetGroups, endpointService };
}

/** The construct id of a listener: `ReadWrite`, `ReadOnly`, `ReadWriteSession`, `ReadOnlySession`. */
function listenerId(listener: FleetListener): string {
  return listener[0]!.toUpperCase() + listener.slice(1);
}

/**
 * Adds a TCP listener of the load balancer for one of the hosts' listeners, its target group (the hosts, on
 * the listener's PgBouncer port, health-checked on its path) and the hosts' ingress from the load balancer;
 * returns the target group. The session listeners are added when an endpoint first asks for one.
 */
export function addPgBouncerListener(
  props: Pick<PgBouncerLoadBalancerProps, 'hosts' | 'hostConnections' | 'tcpIdleTimeout'> & { readonly loadBalancer: elbv2.NetworkLoadBalancer; readonly loadBalancerGroup: ec2.ISecurityGroup },
  listener: FleetListener,
): elbv2.NetworkTargetGroup {
  const targetPort = FLEET_PORTS[listener];
  const role = fleetListenerRole(listener);
  const session = fleetListenerPoolMode(listener) === PoolMode.SESSION;
  props.hostConnections.allowFrom(props.loadBalancerGroup, ec2.Port.tcp(targetPort), `${role} listener${session ? ' (session pooling)' : ''}`);
  return props.loadBalancer.addListener(listenerId(listener), { port: poolerListenerPort(listener), protocol: elbv2.Protocol.TCP, tcpIdleTimeout: props.tcpIdleTimeout }).addTargets('Hosts', {
    port: targetPort,
    protocol: elbv2.Protocol.TCP,
    targets: [props.hosts],
    // The host agent's endpoint: 200 only while the listener's processes answer and their servers accept connections.
    healthCheck: {
      protocol: elbv2.Protocol.HTTP,
      port: String(POOLER_HEALTH_PORT),
      path: POOLER_HEALTH_PATHS[listener],
      healthyHttpCodes: '200',
      interval: Duration.seconds(POOLER_HEALTH_CHECK.intervalSeconds),
      timeout: Duration.seconds(POOLER_HEALTH_CHECK.timeoutSeconds),
      healthyThresholdCount: POOLER_HEALTH_CHECK.healthyThreshold,
      unhealthyThresholdCount: POOLER_HEALTH_CHECK.unhealthyThreshold,
    },
    // Transactions are short: a host leaving rotation is drained quickly.
    deregistrationDelay: Duration.seconds(30),
  });
}
