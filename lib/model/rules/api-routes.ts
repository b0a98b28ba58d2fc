/**
 * The AWS APIs the kit's code calls from inside a VPC, and the rule that each has a route there: a VPC
 * endpoint of its service, or subnets with egress (lib/vpc-api-routes.ts; the role-bootstrap,
 * lambda-consumer and pgbouncer-proxy modules). Without one the call times out, and a custom resource
 * or a host that waits on it rolls the stack back an hour later, where synth could have said so.
 */
import { type Rule, custom } from '../rule-table';

/** An AWS API the kit calls from a VPC, by the last label of its endpoint service name (`com.amazonaws.<region>.<key>`). */
export interface AwsApiSpec {
  /** The endpoint service name's last label, e.g. `secretsmanager`: the key of `vpcEndpoints`. */
  readonly key: string;
  /** How AWS names the service. */
  readonly name: string;
  /** S3 is reached through a gateway endpoint (free, a route in the subnets' route tables); the others through interface endpoints. */
  readonly endpointType: 'Interface' | 'Gateway';
}

/** The kit's callers' APIs, keyed as the props and variables name them. */
export const AWS_APIS = {
  secretsManager: { key: 'secretsmanager', name: 'Secrets Manager', endpointType: 'Interface' },
  s3: { key: 's3', name: 'S3', endpointType: 'Gateway' },
  monitoring: { key: 'monitoring', name: 'CloudWatch metrics', endpointType: 'Interface' },
  cloudFormation: { key: 'cloudformation', name: 'CloudFormation', endpointType: 'Interface' },
  ssm: { key: 'ssm', name: 'Systems Manager', endpointType: 'Interface' },
  ssmMessages: { key: 'ssmmessages', name: 'Session Manager messages', endpointType: 'Interface' },
  ec2Messages: { key: 'ec2messages', name: 'EC2 messages', endpointType: 'Interface' },
} as const satisfies Record<string, AwsApiSpec>;

export type AwsApiName = keyof typeof AWS_APIS;

/** What each caller needs: the role bootstrap and secret-auth consumers read secrets; the PgBouncer hosts call all of these. */
export const ROLE_BOOTSTRAP_APIS: ReadonlyArray<AwsApiName> = ['secretsManager'];
export const SECRET_CONSUMER_APIS: ReadonlyArray<AwsApiName> = ['secretsManager'];
export const POOLER_HOST_APIS: ReadonlyArray<AwsApiName> = ['s3', 'secretsManager', 'monitoring', 'ssm', 'ssmMessages', 'ec2Messages'];
/** The hosts of a CloudFormation stack also signal it (SignalResource): CDK's, not Terraform's. */
export const POOLER_STACK_APIS: ReadonlyArray<AwsApiName> = ['cloudFormation'];

export interface ApiRouteRuleInput {
  /** Whether the caller's subnets route to a NAT gateway or an internet gateway. */
  readonly subnetsHaveEgress?: boolean;
  /** The VPC endpoints the caller may use, by service key (`secretsmanager`, `s3`, ...): their ids or security groups. */
  readonly vpcEndpoints?: Readonly<Record<string, string>>;
  /** The consumer's login (lambda-consumer): only `secret` reads Secrets Manager. */
  readonly auth?: string;
}

const ROUTE_SOURCES = [
  'https://docs.aws.amazon.com/lambda/latest/dg/configuration-vpc-internet.html',
  'https://docs.aws.amazon.com/vpc/latest/privatelink/create-interface-endpoint.html',
  'https://docs.aws.amazon.com/vpc/latest/privatelink/vpc-endpoints-s3.html',
];

/**
 * The route rule of one caller: `apis` are what it calls, `what` how the message names it. A precondition
 * in Terraform, since it spans variables; in CDK the construct derives both properties from its subnets
 * and the VPC's endpoints at synth.
 */
export function apiRouteRule<I extends ApiRouteRuleInput>(id: string, module: string | undefined, apis: ReadonlyArray<AwsApiName>, what: string, extraNames: Record<string, string> = {}): Rule<I> {
  return custom<I>({
    id,
    properties: ['subnetsHaveEgress'],
    names: { subnetsHaveEgress: 'vpcSubnets', vpcEndpoints: 'vpcEndpoints' },
    ...(module === undefined
      ? { notInTerraform: 'only a CloudFormation stack waits for its hosts\' signals; the Terraform module\'s hosts call no CloudFormation API' }
      : { terraform: { module, names: { subnetsHaveEgress: 'subnets_have_egress', vpcEndpoints: 'vpc_endpoints', ...extraNames } } }),
    summary: `${what} reaches ${apis.map((a) => AWS_APIS[a].name).join(', ')}: a VPC endpoint of each${module === undefined ? '' : ' in vpc_endpoints'}, or subnets with egress${module === undefined ? '' : ' (a precondition)'}`,
    aws: {
      constraint: 'a function or instance in a VPC reaches an AWS API only through a VPC endpoint of its service or a route to a NAT gateway or internet gateway (a Lambda function gets no public address, even in a public subnet)',
      sources: ROUTE_SOURCES,
    },
    check: (i, n) => {
      if (i.subnetsHaveEgress) return undefined;
      if (i.auth !== undefined && i.auth !== 'secret') return undefined;
      const missing = apis.filter((a) => !(AWS_APIS[a].key in (i.vpcEndpoints ?? {})));
      if (missing.length === 0) return undefined;
      const names = missing.map((a) => `${AWS_APIS[a].name} (${AWS_APIS[a].key})`).join(', ');
      const keys = missing.map((a) => AWS_APIS[a].key).join(', ');
      return `no route from ${what} to ${names}: the subnets have no egress (${n('subnetsHaveEgress')}) and ${n('vpcEndpoints')} names no VPC endpoint of ${missing.length > 1 ? 'them' : 'it'}; pass the VPC's endpoints in ${n('vpcEndpoints')} (${keys}), or subnets with a route to a NAT gateway or an internet gateway`;
    },
  });
}
