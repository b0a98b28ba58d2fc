/**
 * What a pooler host of the PgBouncer engine is started with (its logins, the deployment's user data and
 * values) and what a started or booting host is (pooler-host.ts starts them).
 */
import type { EndpointRole } from '../../lambda/src/environment';
import type { AwsEmulator } from './hosts/aws-emulator';
import type { BootedHost } from './hosts/booted-host';
import type { FleetUserDataRenderer } from './topology/types';

/** A login of the engine: a consumer's or the read-only listener's server role. */
export interface PoolerHostLogin {
  readonly username: string;
  readonly password: string;
}

export interface PoolerHostOptions {
  /** The consumers' logins: each gets a role whose password is its secret's derived verifier, as the role bootstrap makes it. */
  readonly consumers: ReadonlyArray<PoolerHostLogin & { readonly access: 'READ_ONLY' | 'READ_WRITE' }>;
  /** The read-only listener's server role (read-only privileges). */
  readonly server: PoolerHostLogin;
  /**
   * The roles the deployment's role bootstrap makes (`rehearse up --from`): only these are made; a login
   * without one fails, as it would on AWS.
   * @default a role for each login (the consumers' and the server's)
   */
  readonly roles?: ReadonlyArray<{ readonly name: string; readonly access: EndpointRole }>;
  /** PgBouncer processes per listener, as a host's vCPUs (default 2). */
  readonly vcpus?: number;
  /** The NLB idle timeout the host's keepalives derive from (default 350 s). */
  readonly tcpIdleTimeoutSeconds?: number;
  /**
   * A deployment's fleet (`rehearse up --from`): its user data as the launch template carries it and the values
   * the deployment fixes. The values AWS fills in at deploy time (endpoints, the bucket, secret ARNs, the stack
   * to signal) are the rehearsal's; so is MaxConnections, as the instances here are not of the deployment's class.
   * @default the kit's bootstrap with the rehearsal's values
   */
  readonly deployment?: {
    readonly userData: string;
    readonly values: Readonly<Record<string, string>>;
    readonly stackName?: string;
    /**
     * What renders the user data with its values: Fn::Sub's substitution, or Terraform's templatefile (run by Terraform).
     * @default 'cloudformation-sub'
     */
    readonly renderer?: FleetUserDataRenderer;
  };
  /** The Fleet dimension of its metrics (default 'rehearsal-pooler'). */
  readonly fleetName?: string;
  /**
   * The roles some endpoint of the deployment uses in session pooling: the host lays out their session
   * listeners, as a deployed host does from the same values (default none).
   */
  readonly sessionRoles?: ReadonlyArray<EndpointRole>;
  /** The session listeners' share of each target's budget (default DEFAULT_SESSION_MAX_CONNECTIONS_PERCENT). */
  readonly sessionMaxConnectionsPercent?: number;
  /**
   * The exporter's period, set on the host as an operator would (a drop-in for the agent's unit), default
   * the unit's own (POOLER_METRICS_PERIOD_SECONDS).
   */
  readonly metricsPeriodSeconds?: number;
}

export interface PoolerHost {
  /** Its name: pooler-<i>. */
  readonly name: string;
  /** The booted host: its container (systemd-nspawn) and its metadata service, both tracked by pid. */
  readonly booted: BootedHost;
  /** The host's / as seen from here (the container's root, through its PID 1): its files, its sockets. */
  readonly root: string;
  /** Its private address in the data VPC: where its listeners and health endpoint are reached. */
  readonly host: string;
  readonly ports: { readonly readWrite: number; readonly readOnly: number };
  readonly healthPort: number;
  /** The deploy-time values its user data was substituted with (what Fn::Sub / templatefile would take). */
  readonly values: Readonly<Record<string, string>>;
  /** The AWS emulator its AWS calls go to (its CloudWatch holds the exporter's metrics). */
  readonly aws: AwsEmulator;
}

/** A pooler host booted and not waited for: its user data runs (or fails) on its own. */
export interface BootingPoolerHost {
  readonly name: string;
  readonly booted: BootedHost;
  /** Its private address in the data VPC. */
  readonly host: string;
  /** The values its user data was substituted with. */
  readonly values: Readonly<Record<string, string>>;
  readonly aws: AwsEmulator;
}
