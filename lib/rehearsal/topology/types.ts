/**
 * What a deployment of the kit would create, as far as the local rehearsal cares, read from either
 * flavour: a CDK cloud assembly (topologyFromCdkOut) or a Terraform plan (topologyFromPlan). Engine
 * neutral: nothing here names PgBouncer or PostgreSQL processes; settingsFromTopology maps it onto the
 * rehearsal.
 *
 * Ids are the input's own names for things, so a reader can find them again: CDK `<stack>/<logical id>`,
 * Terraform resource addresses. Every cross-reference (a consumer's endpoint, an element's VPC) is such
 * an id; `undefined` where the input does not say, with the reason in `notes`.
 */
import type { ConnectionMode, DbAuth, DbTlsMode, EndpointRole } from '../../../lambda/src/environment';
import type { PoolSettings } from '../../model/sizing';

/** Where a topology was read from. */
export type TopologySource =
  | { readonly kind: 'cdk-assembly'; readonly path: string; readonly stacks: ReadonlyArray<string> }
  | { readonly kind: 'terraform-plan'; readonly path?: string; readonly terraformVersion?: string };

export interface VpcTopology {
  readonly id: string;
  /** The VPC's Name tag, when it has one. */
  readonly name?: string;
  /** IPv4 CIDR block; undefined for a VPC the input only names by id (an existing one). */
  readonly cidr?: string;
}

export interface InstanceTopology {
  readonly id: string;
  /** DBInstanceIdentifier / identifier, when the input names the instance. */
  readonly identifier?: string;
  readonly instanceClass: string;
  readonly promotionTier?: number;
}

export interface ClusterTopology {
  readonly id: string;
  /** DBClusterIdentifier / cluster_identifier, when the input names the cluster. */
  readonly identifier?: string;
  readonly engine: string;
  readonly engineVersion?: string;
  readonly port: number;
  readonly databaseName?: string;
  readonly vpc?: string;
  /** The instance the others are created after: Aurora makes the first instance created the writer. */
  readonly writer: InstanceTopology;
  readonly readers: ReadonlyArray<InstanceTopology>;
}

/** The proxy's pool (its default target group); values the input leaves out take RDS Proxy's defaults. */
export interface ProxyPoolTopology extends PoolSettings {
  /** SQL the proxy runs on each new server connection, if any. */
  readonly initQuery?: string;
  /** The settings the input left out, filled with RDS Proxy's documented defaults (poolWithDefaults). */
  readonly defaulted: ReadonlyArray<keyof PoolSettings>;
}

export interface ProxyTopology {
  readonly id: string;
  readonly name: string;
  readonly engineFamily: string;
  /** The VPC of the proxy, which is that of its default endpoint. */
  readonly vpc?: string;
  readonly requireTls: boolean;
  /** DefaultAuthScheme: IAM_AUTH (end-to-end IAM) or NONE / absent (Secrets Manager auth entries). */
  readonly authScheme: string;
  readonly idleClientTimeoutSeconds?: number;
  /** Id of the default endpoint in `endpoints` (always READ_WRITE). */
  readonly defaultEndpoint: string;
  readonly pool: ProxyPoolTopology;
}

export interface ProxyEndpointTopology {
  /** The endpoint resource's id; for the default endpoint, the proxy's id followed by `#default`. */
  readonly id: string;
  readonly name: string;
  readonly role: EndpointRole;
  readonly isDefault: boolean;
  readonly vpc?: string;
}

/**
 * A consumer's environment value with references resolved: a literal, the host name of one of the
 * proxy's endpoints, or something known only at deploy time that is not a proxy endpoint.
 */
export type EnvValue =
  | { readonly kind: 'literal'; readonly value: string }
  | { readonly kind: 'endpoint-host'; readonly endpoint: string }
  | { readonly kind: 'unknown'; readonly detail: string };

/** A consumer's connection, read through the consumers' contract (lambda/src/environment.ts), defaults applied. */
export interface ConsumerConnection {
  readonly host: EnvValue;
  readonly port: number;
  readonly database?: string;
  readonly user?: string;
  readonly endpointRole: EndpointRole;
  readonly auth: DbAuth;
  readonly tls: { readonly mode: DbTlsMode; readonly serverName?: EnvValue };
  readonly connectionMode: ConnectionMode;
  readonly connectTimeoutMs: number;
  readonly queryTimeoutMs: number;
  readonly maxRetries: number;
  readonly retryBaseDelayMs: number;
}

/** A function that follows the consumers' contract (its environment carries DB_ENDPOINT_ROLE). */
export interface ConsumerTopology {
  readonly id: string;
  readonly functionName?: string;
  readonly vpc?: string;
  /** Id of the endpoint DB_HOST names. */
  readonly endpoint?: string;
  /** Every variable of the contract the function sets, references resolved. */
  readonly environment: Readonly<Record<string, EnvValue>>;
  readonly connection: ConsumerConnection;
  /** The code the function deploys, when the input names it: a cdk.out asset directory or a zip file. */
  readonly code?: FunctionCode;
}

export interface FunctionCode {
  /** A bundle directory (cdk.out asset) or a .zip (the Terraform module's `filename`), as a path on this machine. */
  readonly path: string;
  /** The function's handler setting (`<file>.<export>`). */
  readonly handler?: string;
}

/** A stable key per not-reproducible entry, so two flavours' lists compare without their wording. */
export type NotReproducibleId = 'iam-auth' | 'secrets-manager' | 'kms' | 'cloudwatch' | 'xray' | 'proxy-certificate' | 'session-pinning' | 'database-users' | 'instance-class' | 'host-image' | 'load-balancer' | 'aws-apis';

/** Something the deployment relies on that the local rehearsal does not run, and what stands in for it. */
export interface NotReproducible {
  readonly id: NotReproducibleId;
  /** The service and where the input shows it. */
  readonly what: string;
  readonly localStandIn: string;
}

/** Who renders the fleet's user data from its template and values. */
export type FleetUserDataRenderer = 'cloudformation-sub' | 'terraform-templatefile';

/**
 * The PgBouncer engine's fleet: an Auto Scaling group whose launch template's user data is the engine's
 * bootstrap, behind a VPC endpoint service. `proxy` and `endpoints` describe it in the engine-neutral terms
 * the consumers use (its interface endpoints in the consumer VPCs are the endpoints).
 */
export interface FleetTopology {
  /** The Auto Scaling group. */
  readonly id: string;
  /** The hosts it keeps (DesiredCapacity, else MinSize). */
  readonly hosts: number;
  /** The user data as deployed, before substitution: Fn::Sub's template, or the module's templatefile. */
  readonly userData: string;
  /**
   * What substitutes the values into it on deploy: CloudFormation's Fn::Sub, or Terraform's templatefile
   * (the rehearsal then renders it with Terraform itself).
   */
  readonly renderer: FleetUserDataRenderer;
  /** Each substitution value: a literal, or one AWS fills in at deploy time (the rehearsal fills its own). */
  readonly values: Readonly<Record<string, EnvValue>>;
}

/** A database role the deployment's role bootstrap makes. */
export interface TopologyRole {
  readonly name: string;
  readonly access: EndpointRole;
}

/** The deployment's role bootstrap: the only maker of database roles in a deployment of the kit. */
export interface RoleBootstrapTopology {
  readonly id: string;
  readonly database?: string;
  /** undefined when the input does not say them (known only at deploy time; see `notes`). */
  readonly roles?: ReadonlyArray<TopologyRole>;
}

export interface DeployedTopology {
  readonly source: TopologySource;
  /** undefined when the input does not fix one (an environment-agnostic CDK stack). */
  readonly region?: string;
  readonly cluster: ClusterTopology;
  readonly proxy: ProxyTopology;
  /** The proxy's endpoints, its default endpoint first. */
  readonly endpoints: ReadonlyArray<ProxyEndpointTopology>;
  readonly vpcs: ReadonlyArray<VpcTopology>;
  readonly consumers: ReadonlyArray<ConsumerTopology>;
  /** Present when the pooling tier is the PgBouncer engine's fleet rather than an RDS Proxy. */
  readonly fleet?: FleetTopology;
  /** The role bootstraps the deployment runs; empty when it makes no database roles. */
  readonly roleBootstraps: ReadonlyArray<RoleBootstrapTopology>;
  readonly notReproducible: ReadonlyArray<NotReproducible>;
  /** How facts the input does not state outright were derived, and which stayed unknown. */
  readonly notes: ReadonlyArray<string>;
}
