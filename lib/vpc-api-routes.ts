import { Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct, IConstruct } from 'constructs';
import { AWS_APIS, type AwsApiName, GATEWAY_ENDPOINT_PRINCIPAL_KEY, evaluateRules, type ApiRouteRuleInput, type Rule } from './model';
import { KitValidationError } from './private/validation';

/** Whether a construct makes the VPC endpoints of the AWS APIs it calls from its VPC. */
export enum ApiRoutes {
  /** The construct makes each endpoint it needs (one per VPC and service, shared with the kit's other constructs), with a least-privilege policy. */
  CREATE = 'CREATE',
  /**
   * You route the calls yourself: endpoints you pass in `vpcEndpoints` (or made in the same VPC of this app), or
   * subnets with egress. Synth fails when the construct's subnets have neither for an API it calls.
   */
  BRING_YOUR_OWN = 'BRING_YOUR_OWN',
}

/**
 * VPC endpoints of your own, by the AWS API they reach (with `apiRoutes: ApiRoutes.BRING_YOUR_OWN`). An interface
 * endpoint's security group gets HTTPS from the construct; its policy is yours to keep open to the construct's calls.
 */
export interface VpcApiEndpoints {
  /** @default - none */
  readonly secretsManager?: ec2.IInterfaceVpcEndpoint;
  /** The S3 gateway endpoint, routed in the construct's subnets. @default - none */
  readonly s3?: ec2.IGatewayVpcEndpoint;
  /** CloudWatch's `monitoring` endpoint. @default - none */
  readonly monitoring?: ec2.IInterfaceVpcEndpoint;
  /** @default - none */
  readonly cloudFormation?: ec2.IInterfaceVpcEndpoint;
  /** @default - none */
  readonly ssm?: ec2.IInterfaceVpcEndpoint;
  /** @default - none */
  readonly ssmMessages?: ec2.IInterfaceVpcEndpoint;
  /** @default - none */
  readonly ec2Messages?: ec2.IInterfaceVpcEndpoint;
}

/** Calls an endpoint policy passes. */
export interface ApiCallStatement {
  readonly actions: string[];
  readonly resources: string[];
  /** Conditions of the statement. @default - none */
  readonly conditions?: Record<string, Record<string, unknown>>;
}

/** One caller's use of an endpoint: its network access, its principal, and what the endpoint policy passes. */
export interface ApiRouteGrant {
  /** What reaches the interface endpoint on 443 (ignored for the S3 gateway endpoint, which has no security group). */
  readonly caller: ec2.IConnectable;
  /** The caller's role: the endpoint policy's principal (for S3, its `aws:PrincipalArn`). */
  readonly role: iam.IRole;
  /** What the endpoint policy passes for the role: one statement each. */
  readonly statements: ApiCallStatement[];
  /** Why the caller calls it, for the security group rule's description. */
  readonly purpose: string;
  /** Subnets the S3 gateway endpoint routes, when this call makes it. @default - the VPC's isolated subnets */
  readonly subnets?: ec2.SubnetSelection;
}

/** A caller's route to one API: the endpoint, and its statements in the endpoint's policy (a caller may add resources to them later). */
export interface ApiRoute {
  readonly endpoint: ec2.IVpcEndpoint;
  readonly statements: iam.PolicyStatement[];
}

const ROUTES_ID = 'KitApiRoutes';

/**
 * The VPC endpoints the kit's constructs call AWS APIs through, one per VPC and service: the first construct
 * that needs a service makes its endpoint (an interface endpoint with private DNS and a security group open to
 * its callers only, or the S3 gateway endpoint), and every caller adds its own statement to the endpoint's
 * policy, so the endpoint passes only the kit's own calls. Found with `VpcApiRoutes.of(scope, vpc)`: under the
 * VPC when the VPC is in the caller's stack, else under the caller's stack; the same VPC from two stacks is refused
 * (two endpoints of a service with private DNS in one VPC do not deploy).
 */
export class VpcApiRoutes extends Construct {
  /** The routes of `vpc`, made on first use. */
  public static of(scope: IConstruct, vpc: ec2.IVpc): VpcApiRoutes {
    const stack = Stack.of(scope);
    const home: IConstruct = Stack.of(vpc) === stack ? vpc : stack;
    const id = home === vpc ? ROUTES_ID : `${ROUTES_ID}${vpc.node.addr}`;
    const existing = home.node.tryFindChild(id) as VpcApiRoutes | undefined;
    if (existing) return existing;
    const elsewhere = ROUTES_BY_VPC.get(vpc);
    if (elsewhere && Stack.of(elsewhere) !== stack) {
      throw new KitValidationError(scope, [
        `the VPC ${vpc.node.path} already has the kit's endpoints in stack ${Stack.of(elsewhere).stackName} (${elsewhere.node.path}), and a VPC takes one endpoint per service: pass apiRoutes ApiRoutes.BRING_YOUR_OWN with vpcEndpoints from ${elsewhere.node.path}`,
      ]);
    }
    const routes = new VpcApiRoutes(home, id, vpc);
    ROUTES_BY_VPC.set(vpc, routes);
    return routes;
  }

  public readonly vpc: ec2.IVpc;
  private readonly endpoints = new Map<AwsApiName, ec2.InterfaceVpcEndpoint | ec2.GatewayVpcEndpoint>();

  private constructor(scope: IConstruct, id: string, vpc: ec2.IVpc) {
    super(scope as Construct, id);
    this.vpc = vpc;
  }

  /** The endpoint of `api` made so far, if any. */
  public endpointOf(api: AwsApiName): ec2.InterfaceVpcEndpoint | ec2.GatewayVpcEndpoint | undefined {
    return this.endpoints.get(api);
  }

  /** The APIs with an endpoint here. */
  public get apis(): AwsApiName[] {
    return [...this.endpoints.keys()];
  }

  /**
   * Routes one caller's calls of `api`: the endpoint (made if new), HTTPS to it from the caller, and a policy
   * statement per `grant.statements` for the caller's role, passing exactly those calls.
   */
  public grant(api: AwsApiName, grant: ApiRouteGrant): ApiRoute {
    const spec = AWS_APIS[api];
    if (spec.endpointType === 'Gateway') {
      const endpoint = (this.endpoints.get(api) as ec2.GatewayVpcEndpoint | undefined) ?? this.newGatewayEndpoint(api, grant.subnets);
      // A gateway endpoint's policy takes Principal "*" only: the caller is named by aws:PrincipalArn
      // (https://docs.aws.amazon.com/vpc/latest/privatelink/vpc-endpoints-access.html#vpc-endpoint-policies-gateway).
      const statements = grant.statements.map((s) => new iam.PolicyStatement({
        principals: [new iam.StarPrincipal()],
        actions: s.actions,
        resources: s.resources,
        conditions: { ...s.conditions, StringEquals: { ...(s.conditions?.StringEquals ?? {}), [GATEWAY_ENDPOINT_PRINCIPAL_KEY]: grant.role.roleArn } },
      }));
      for (const statement of statements) endpoint.addToPolicy(statement);
      return { endpoint, statements };
    }
    const endpoint = (this.endpoints.get(api) as ec2.InterfaceVpcEndpoint | undefined) ?? this.newInterfaceEndpoint(api);
    endpoint.connections.allowDefaultPortFrom(grant.caller, grant.purpose);
    const statements = grant.statements.map((s) => new iam.PolicyStatement({ principals: [grant.role], actions: s.actions, resources: s.resources, conditions: s.conditions }));
    for (const statement of statements) endpoint.addToPolicy(statement);
    return { endpoint, statements };
  }

  private newInterfaceEndpoint(api: AwsApiName): ec2.InterfaceVpcEndpoint {
    const spec = AWS_APIS[api];
    const id = pascal(api);
    const securityGroup = new ec2.SecurityGroup(this, `${id}SecurityGroup`, {
      vpc: this.vpc,
      description: `${spec.name} interface endpoint: HTTPS from the aurora-proxy-kit constructs that call it only`,
      allowAllOutbound: false,
    });
    // open: false: the callers are allowed one by one; the policy starts empty and passes only their statements.
    const endpoint = new ec2.InterfaceVpcEndpoint(this, id, {
      vpc: this.vpc,
      service: new ec2.InterfaceVpcEndpointAwsService(spec.key),
      privateDnsEnabled: true,
      open: false,
      securityGroups: [securityGroup],
    });
    this.endpoints.set(api, endpoint);
    return endpoint;
  }

  private newGatewayEndpoint(api: AwsApiName, subnets?: ec2.SubnetSelection): ec2.GatewayVpcEndpoint {
    const endpoint = new ec2.GatewayVpcEndpoint(this, pascal(api), {
      vpc: this.vpc,
      service: ec2.GatewayVpcEndpointAwsService.S3,
      subnets: [subnets ?? { subnetType: ec2.SubnetType.PRIVATE_ISOLATED }],
    });
    this.endpoints.set(api, endpoint);
    return endpoint;
  }
}

/** Where each VPC's kit endpoints are, across the app's stacks. */
const ROUTES_BY_VPC = new WeakMap<ec2.IVpc, VpcApiRoutes>();

const pascal = (api: string) => api.charAt(0).toUpperCase() + api.slice(1);

/** The props a caller takes to say how its calls are routed. */
export interface ApiRouteOptions {
  readonly apiRoutes?: ApiRoutes;
  readonly vpcEndpoints?: VpcApiEndpoints;
}

/**
 * A caller's routes: with CREATE each API goes through the kit's endpoint (made here if new) via `grantOf`;
 * otherwise the user's endpoints get HTTPS from the caller, and a validation at synth fails (the model's rule)
 * when an API has neither an endpoint (the user's, or one in the VPC's construct tree) nor egress from the
 * caller's subnets. Returns the kit's routes, by API (none with BRING_YOUR_OWN): the caller's first calls wait for their endpoints.
 */
export function routeApiCalls<I extends ApiRouteRuleInput>(
  caller: Construct,
  options: ApiRouteOptions & {
    vpc: ec2.IVpc;
    vpcSubnets: ec2.SubnetSelection;
    connections: ec2.Connections;
    apis: ReadonlyArray<AwsApiName>;
    rules: ReadonlyArray<Rule<I>>;
    /** Whether the caller's security group needs HTTPS to the user's endpoints (false: its egress already covers them). */
    connectToGiven?: boolean;
  },
  grantOf: (api: AwsApiName) => ApiRouteGrant,
): Map<AwsApiName, ApiRoute> {
  const mode = options.apiRoutes ?? ApiRoutes.CREATE;
  if (mode === ApiRoutes.CREATE) {
    if (options.vpcEndpoints !== undefined) {
      throw new KitValidationError(caller, ['vpcEndpoints is set with apiRoutes CREATE: the construct would make a second endpoint of a service beside yours; set apiRoutes to ApiRoutes.BRING_YOUR_OWN to use yours']);
    }
    const routes = VpcApiRoutes.of(caller, options.vpc);
    return new Map(options.apis.map((api) => [api, routes.grant(api, grantOf(api))]));
  }
  const given = options.vpcEndpoints ?? {};
  for (const api of options.apis) {
    const endpoint = given[api];
    if (endpoint !== undefined && AWS_APIS[api].endpointType === 'Interface' && options.connectToGiven !== false) {
      options.connections.allowTo(endpoint as ec2.IInterfaceVpcEndpoint, ec2.Port.tcp(443), `calls ${AWS_APIS[api].name}`);
    }
  }
  // At synth, so that endpoints added to the VPC after this construct count.
  caller.node.addValidation({
    validate: () => {
      const endpoints: Record<string, string> = {};
      for (const api of options.apis) {
        if (given[api] !== undefined || endpointInTree(options.vpc, AWS_APIS[api].key)) endpoints[AWS_APIS[api].key] = 'present';
      }
      const input = { subnetsHaveEgress: subnetsHaveEgress(options.vpc, options.vpcSubnets), vpcEndpoints: endpoints } as I;
      return evaluateRules(options.rules, input).map((v) => `${v.message}; or leave apiRoutes at ApiRoutes.CREATE (the default) so the construct makes them`);
    },
  });
  return new Map();
}

/**
 * Whether the selected subnets route out: PRIVATE_WITH_EGRESS (a NAT gateway) or PUBLIC (an internet gateway), as
 * the VPC classifies them. Isolated subnets, and subnets the VPC does not list, do not.
 */
export function subnetsHaveEgress(vpc: ec2.IVpc, selection: ec2.SubnetSelection): boolean {
  const selected = vpc.selectSubnets(selection).subnets;
  const routed = new Set([...vpc.privateSubnets, ...vpc.publicSubnets].map((s) => s.subnetId));
  return selected.length > 0 && selected.every((s) => routed.has(s.subnetId));
}

/**
 * Whether the app defines a VPC endpoint of the service in this VPC that is the user's: the kit's own endpoints
 * (under a VpcApiRoutes) admit only the constructs that route through them, by security group and policy.
 */
function endpointInTree(vpc: ec2.IVpc, key: string): boolean {
  return vpc.node.root.node.findAll().some((c) =>
    c instanceof ec2.CfnVPCEndpoint && c.vpcId === vpc.vpcId && !c.node.scopes.some((s) => s instanceof VpcApiRoutes) && serviceNameText(c).endsWith(`.${key}`));
}

/**
 * An endpoint's service name as text, the Region and other tokens as `*`: aws-cdk-lib's service names are
 * Fn::Join of literals and tokens (com.amazonaws.<Region>.<service>, and an empty suffix of its own).
 */
function serviceNameText(c: ec2.CfnVPCEndpoint): string {
  const resolved: unknown = Stack.of(c).resolve(c.serviceName);
  if (typeof resolved === 'string') return resolved;
  const join = (resolved as { 'Fn::Join'?: [string, unknown[]] } | undefined)?.['Fn::Join'];
  return join === undefined ? '' : join[1].map((part) => (typeof part === 'string' ? part : '*')).join(join[0]);
}
