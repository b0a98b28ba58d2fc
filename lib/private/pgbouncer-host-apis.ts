import { Aws } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { PGBOUNCER_PROXY_RULES, POOLER_HOST_APIS, POOLER_STACK_APIS, type AwsApiName } from '../model';
import { POOLER_METRICS_NAMESPACE } from '../model/pgbouncer-metrics';
import { FLEET_SIGNAL_POLICY } from '../model/pgbouncer-rollout';
import type { PgBouncerPackages } from '../pgbouncer-packages';
import { routeApiCalls, type ApiRouteGrant, type ApiRouteOptions } from '../vpc-api-routes';

/** What the hosts' routes need of their PgBouncerProxy, its hosts built and its listeners' certificate known. */
export interface PgBouncerHostCaller extends Construct {
  readonly hostRole: iam.Role;
  readonly connections: ec2.Connections;
  readonly autoScalingGroup: autoscaling.AutoScalingGroup;
  /** What the hosts read: the users' secrets and the listeners' certificate. */
  readonly hostSecrets: secretsmanager.ISecret[];
}

/** How a PgBouncerProxy's hosts reach the AWS APIs they call, and where. */
export interface PgBouncerHostApiProps extends ApiRouteOptions {
  readonly packages: PgBouncerPackages;
  readonly vpc: ec2.IVpc;
  readonly vpcSubnets: ec2.SubnetSelection;
}

/**
 * Routes the hosts' calls of the AWS APIs (`apiRoutes`, vpc-api-routes.ts), built into the proxy's scope, and makes
 * the hosts wait for the kit's endpoints. Returns the kit's Secrets Manager endpoint statement of the hosts (CREATE),
 * to which consumers added later add their secrets.
 */
export function routePgBouncerHostApis(proxy: PgBouncerHostCaller, props: PgBouncerHostApiProps): iam.PolicyStatement | undefined {
  const { vpc, vpcSubnets } = props;
  const routes = routeApiCalls(
    proxy,
    {
      apiRoutes: props.apiRoutes,
      vpcEndpoints: props.vpcEndpoints,
      vpc,
      vpcSubnets,
      connections: proxy.connections,
      apis: [...POOLER_HOST_APIS, ...POOLER_STACK_APIS],
      rules: PGBOUNCER_PROXY_RULES.filter((r) => r.id === 'pooler-api-route' || r.id === 'pooler-signal-route'),
      // The hosts' HTTPS egress already reaches any endpoint of the VPC (s3PrefixListId); your endpoints'
      // security groups are yours to open, as in Terraform.
      connectToGiven: false,
    },
    (api) => hostGrant(proxy, api, props.packages, vpcSubnets),
  );
  // The hosts boot once what they call answers: a host that cannot signal would fail the stack's creation.
  for (const route of routes.values()) proxy.autoScalingGroup.node.defaultChild!.node.addDependency(route.endpoint);
  return routes.get('secretsManager')?.statements[0];
}

/** What the hosts call through each endpoint, for its policy. */
function hostGrant(proxy: PgBouncerHostCaller, api: AwsApiName, packages: PgBouncerPackages, subnets: ec2.SubnetSelection): ApiRouteGrant {
  const grant = (purpose: string, statements: ApiRouteGrant['statements']): ApiRouteGrant => ({ caller: proxy, role: proxy.hostRole, statements, purpose: `PgBouncer hosts: ${purpose}`, subnets });
  switch (api) {
    case 's3':
      // The packages object is all the hosts read from S3 (they install from it, not from Debian's archive):
      // nothing in the VPC reaches any other bucket through this endpoint, whatever credentials it holds.
      return grant('the packages object', [{ actions: ['s3:GetObject'], resources: [packages.bucket.arnForObjects(packages.key)] }]);
    case 'secretsManager':
      // Consumers added later add their secrets to this statement (addConsumerUser).
      return grant('their secrets', [{ actions: ['secretsmanager:GetSecretValue'], resources: proxy.hostSecrets.map((secret) => secret.secretArn) }]);
    case 'monitoring':
      return grant('the metrics exporter', [{ actions: ['cloudwatch:PutMetricData'], resources: ['*'], conditions: { StringEquals: { 'cloudwatch:namespace': POOLER_METRICS_NAMESPACE } } }]);
    case 'cloudFormation':
      // Each new host's SignalResource: the stack's creation and rolling updates wait for it (pgbouncer-rollout.ts).
      return grant('SignalResource of new hosts', [{ actions: [...FLEET_SIGNAL_POLICY.actions], resources: [Aws.STACK_ID] }]);
    default:
      // Session Manager (shell access without SSH): the agent's three services keep the default policy (the
      // security group admits the hosts only); what a session may do is the host role's and the user's.
      return grant('Session Manager', []);
  }
}
