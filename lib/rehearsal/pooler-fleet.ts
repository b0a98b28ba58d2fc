/**
 * A PgBouncer engine deployment's fleet on the rehearsal (`rehearse up --from` a cdk.out or plan with a
 * PgBouncerProxy / pgbouncer-proxy module): as many booted hosts as its Auto Scaling group keeps, each from
 * the deployment's own user data (pooler-host.ts), and the load balancer stand-in in front of them, which
 * also listens on the interface endpoints' addresses in the consumer VPCs, as PrivateLink carries the
 * endpoint service's listeners there. The consumers reach the fleet only that way.
 *
 * What `drill` and `status` in another process need is written to the work dir (pooler-deployment.json).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { EndpointRole } from '../../lambda/src/environment';
import type { PoolerFleetSpec } from '../model/pgbouncer-fleet';
import { RehearsalConfigError, RehearsalOperationError } from './errors';
import { MAX_POOLER_HOSTS, rehearsalProxyEndpoints } from './network/rehearsal-network';
import { startPoolerHost } from './pooler-host';
import type { PoolerHost, PoolerHostLogin } from './pooler-host-types';
import { startPoolerLoadBalancer, type PoolerLoadBalancer } from './pooler-load-balancer';
import type { RunningRehearsal } from './running';
import { newPassword } from './scram';
import { consumerPassword } from './secrets';
import type { RehearsedDeployment } from './rehearsed-deployment';

/** The fleet as it runs: its hosts, its load balancer stand-in, the logins it serves. */
export interface DeploymentFleet {
  readonly hosts: ReadonlyArray<PoolerHost>;
  readonly loadBalancer: PoolerLoadBalancer;
  /** The read-only listener's server role (the deployment's ServerUser) with the password its secret holds here. */
  readonly server: PoolerHostLogin;
  /** The layout the hosts derive from their values (what the drills check the pools against). */
  readonly spec: PoolerFleetSpec;
}

/**
 * Fails unless the deployment's role bootstrap makes the hosts' read-only server role: on AWS the read-only
 * listener would never log in, so the rehearsal says so before anything boots.
 */
export function checkFleetRoles(d: RehearsedDeployment, serverUser: string): void {
  if (d.databaseRoles.some((r) => r.name === serverUser)) return;
  const made = d.roleBootstraps.length === 0 ? 'it has no role bootstrap' : `${d.roleBootstraps.join(', ')} make ${d.databaseRoles.map((r) => r.name).join(', ') || 'no role'}`;
  throw new RehearsalConfigError([
    `--from ${d.from}: no role bootstrap of the deployment makes the hosts' read-only server role ${serverUser} (${made}): on AWS the read-only listener would never log in; give the DatabaseRoleBootstrap the tier (poolingTier), or list ${serverUser} READ_ONLY in the database-role-bootstrap module's roles`,
  ]);
}

/** The hosts of the deployment's fleet, booted one after another, then the load balancer in front of them. */
export async function startDeploymentFleet(run: RunningRehearsal, progress: (detail: string) => void = () => undefined): Promise<DeploymentFleet> {
  const d = run.state.deployment;
  const fleet = d?.fleet;
  if (d === undefined || fleet === undefined) throw new RehearsalConfigError(['this rehearsal\'s deployment has no PgBouncer engine fleet']);
  run.network.namespacesFor(`--from ${d.from}: the PgBouncer engine's hosts boot in network namespaces: run as root with network namespaces`);
  if (fleet.hosts > MAX_POOLER_HOSTS) throw new RehearsalConfigError([`--from ${d.from}: fleet ${fleet.sourceId} keeps ${fleet.hosts} hosts; the rehearsal's data VPC has room for ${MAX_POOLER_HOSTS}`]);
  const serverUser = fleet.values.ServerUser;
  if (serverUser === undefined) throw new RehearsalConfigError([`--from ${d.from}: the fleet's user data has no literal ServerUser`]);
  checkFleetRoles(d, serverUser);
  const consumers = d.consumers.map((c) => {
    const password = consumerPassword(run.secrets, c.user);
    if (password === undefined) throw new RehearsalConfigError([`consumer ${c.name}: user ${c.user} has no login in this rehearsal's secrets`]);
    return { username: c.user, password, access: c.role === EndpointRole.READ_ONLY ? ('READ_ONLY' as const) : ('READ_WRITE' as const) };
  });
  const unique = [...new Map(consumers.map((c) => [c.username, c])).values()];
  const server = { username: serverUser, password: newPassword() };
  // CloudFormation's stack (its name is the first part of a cdk.out id); Terraform's hosts signal nothing.
  const stackName = fleet.deployTime.SignalStack !== undefined ? fleet.sourceId.split('/')[0] : undefined;
  const hosts: PoolerHost[] = [];
  for (let i = 0; i < fleet.hosts; i++) {
    progress(`pooler host ${i + 1} of ${fleet.hosts}: Debian 13 booted with systemd, the deployment's user data run by cloud-init`);
    hosts.push(
      await startPoolerHost(run, {
        consumers: unique,
        server,
        roles: d.databaseRoles,
        deployment: { userData: fleet.userData, values: fleet.values, renderer: fleet.renderer, ...(stackName !== undefined ? { stackName } : {}) },
      }),
    );
  }
  progress('the load balancer stand-in, on the interface endpoints\' addresses in the consumer VPCs');
  const endpointAddresses = rehearsalProxyEndpoints(run.rehearsed)
    .filter((e) => !e.isDefault)
    .map((e) => e.address);
  const values = hosts[0]!.values;
  const loadBalancer = await startPoolerLoadBalancer(run, hosts, { endpointAddresses, tcpIdleTimeoutSeconds: Number(values.TcpIdleTimeoutSeconds) });
  const spec: PoolerFleetSpec = {
    hosts: Number(values.Hosts),
    vcpusPerHost: Number(values.Vcpus),
    readers: values.ReaderEndpoints!.split(' ').filter((r) => r !== '').length,
    maxConnections: Number(values.MaxConnections),
    pool: { maxConnectionsPercent: Number(values.MaxConnectionsPercent), maxIdleConnectionsPercent: Number(values.MaxIdleConnectionsPercent), connectionBorrowTimeoutSeconds: Number(values.BorrowTimeoutSeconds) },
    tcpIdleTimeoutSeconds: Number(values.TcpIdleTimeoutSeconds),
  };
  const result: DeploymentFleet = { hosts, loadBalancer, server, spec };
  writeFileSync(run.layout.poolerFleet.deploymentFile, JSON.stringify(result, null, 2), { mode: 0o600 });
  return result;
}

/** The fleet a rehearsal of a PgBouncer engine deployment runs (from its work dir); undefined without one. */
export function readDeploymentFleet(run: RunningRehearsal): DeploymentFleet | undefined {
  if (run.state.deployment?.fleet === undefined) return undefined;
  const file = run.layout.poolerFleet.deploymentFile;
  if (!existsSync(file)) throw new RehearsalOperationError(`the deployment's fleet never came up (no ${file}): run \`rehearse down\`, then \`rehearse up --from ${run.state.deployment.from}\``);
  return JSON.parse(readFileSync(file, 'utf8')) as DeploymentFleet;
}
