/**
 * The deployment a rehearsal rehearses, as data (deployment.ts reduces a DeployedTopology to it): the settings
 * carry it and the state file stores it, so it sits below both.
 */
import type { ConnectionMode, DbTlsMode, EndpointRole } from '../../lambda/src/environment';
import type { FleetUserDataRenderer, NotReproducible, TopologyRole } from './topology/types';

export interface RehearsedEndpoint {
  /** The endpoint's name as RDS would know it (lower case, as it appears in its DNS name). */
  readonly name: string;
  readonly role: EndpointRole;
  readonly isDefault: boolean;
  /** DATA_VPC or the key of a consumer VPC. */
  readonly vpc: string;
  /** The id in the deployment (`<stack>/<logical id>` or a resource address), to find it again. */
  readonly sourceId: string;
}

export interface RehearsedConsumer {
  /** A readable name: the function name, else the last part of its id. */
  readonly name: string;
  readonly sourceId: string;
  /** The consumer VPC key it runs in. */
  readonly vpc: string;
  /** Name of the RehearsedEndpoint its DB_HOST names. */
  readonly endpoint: string;
  readonly role: EndpointRole;
  readonly database: string;
  readonly user: string;
  readonly tlsMode: DbTlsMode;
  /** Name of the endpoint DB_TLS_SERVER_NAME names (verify-proxy-domain: the proxy's default endpoint). */
  readonly tlsServerEndpoint?: string;
  readonly connectionMode: ConnectionMode;
  /** The code the function deploys (a cdk.out asset directory or a release zip), when the deployment names it. */
  readonly code?: string;
  /** The function's handler setting, when the deployment names it. */
  readonly functionHandler?: string;
}

/** The PgBouncer engine's fleet as the rehearsal boots it: the deployment's own user data and values. */
export interface RehearsedFleet {
  /** The Auto Scaling group's id in the deployment. */
  readonly sourceId: string;
  readonly hosts: number;
  /** The user data before substitution, as the launch template carries it. */
  readonly userData: string;
  /** What renders it: Fn::Sub (the rehearsal substitutes as CloudFormation does) or Terraform's templatefile (Terraform renders it). */
  readonly renderer: FleetUserDataRenderer;
  /** The substitution values the deployment fixes. */
  readonly values: Readonly<Record<string, string>>;
  /** The values AWS fills in at deploy time, each with what the deployment refers to; the rehearsal fills its own. */
  readonly deployTime: Readonly<Record<string, string>>;
}

export interface RehearsedDeployment {
  /** Where it was read from (the --from argument). */
  readonly from: string;
  readonly region: string;
  readonly proxyName: string;
  readonly clusterName: string;
  readonly database: string;
  readonly writerClass: string;
  readonly readerClasses: ReadonlyArray<string>;
  /** The default endpoint first. */
  readonly endpoints: ReadonlyArray<RehearsedEndpoint>;
  /** Consumer VPCs in the order their namespaces are made: key (namespace suffix) and source id. */
  readonly consumerVpcs: ReadonlyArray<{ readonly key: string; readonly sourceId: string }>;
  readonly consumers: ReadonlyArray<RehearsedConsumer>;
  /** The PgBouncer engine's fleet, when the pooling tier is one (the endpoints are then its interface endpoints). */
  readonly fleet?: RehearsedFleet;
  /**
   * The database roles the deployment's role bootstrap makes, the only roles the rehearsal makes: none
   * without a role bootstrap (the consumers' logins then fail, as on AWS).
   */
  readonly databaseRoles: ReadonlyArray<TopologyRole>;
  /** The role bootstraps' ids in the input; empty when the deployment has none. */
  readonly roleBootstraps: ReadonlyArray<string>;
  readonly notReproducible: ReadonlyArray<NotReproducible>;
}
