/**
 * The consumers of a rehearsed deployment, as the Lambda harness runs them: each in its consumer VPC's
 * namespace, with the environment the template gives it (endpoint by its AWS-shaped name, the TLS mode
 * and server name the construct or module chose, its own database user), except for what cannot run
 * here: a password in place of an IAM token, and the rehearsal's CA in place of Amazon's roots.
 */
import { existsSync } from 'node:fs';
import { consumerEnvironment, ENV_VARS, type EndpointRole } from '../../lambda/src/environment';
import { RehearsalConfigError } from './errors';
import { POOLER_LISTENER_PORTS } from '../model/pgbouncer-hosts';
import type { HandlerName } from './lambda-harness';
import { rehearsalProxyEndpoints, type NetworkSettings } from './network/rehearsal-network';
import { consumerPassword, type Secrets } from './secrets';
import type { ResolvedSettings } from './settings';

export interface RehearsedConsumerRun {
  readonly name: string;
  readonly role: EndpointRole;
  readonly handler: HandlerName;
  /** The consumer VPC's namespace. */
  readonly namespace: string;
  /** The endpoint's AWS-shaped host name and its address in the consumer VPC. */
  readonly endpointHost: string;
  readonly endpointAddress: string;
  readonly env: Record<string, string>;
  /** The code the function deploys (its cdk.out asset directory or release zip), for simulateInvocations({ code }). */
  readonly code?: string;
  /** Its handler setting, for simulateInvocations({ functionHandler }). */
  readonly functionHandler?: string;
}

/** Every consumer of the deployment rehearsed, ready for simulateInvocations({ namespace, env, handler, code, functionHandler }). */
export function deploymentConsumers(settings: Pick<ResolvedSettings, 'port'>, rehearsed: NetworkSettings, secrets: Secrets, caFile: string): RehearsedConsumerRun[] {
  const deployment = rehearsed.deployment;
  if (deployment === undefined) throw new RehearsalConfigError(['this rehearsal was not started from a deployment: start it with `rehearse up --from <cdk.out | plan.json>`']);
  const endpoints = rehearsalProxyEndpoints(rehearsed);
  return deployment.consumers.map((c) => {
    const endpoint = endpoints.find((e) => e.name === c.endpoint && !e.isDefault);
    if (endpoint?.namespace === undefined) throw new RehearsalConfigError([`consumer ${c.name}: endpoint ${c.endpoint} is not in a consumer VPC of this rehearsal`]);
    if (c.code !== undefined && !existsSync(c.code)) {
      throw new RehearsalConfigError([`consumer ${c.name}: its code ${c.code} is gone: ${c.code.endsWith('.zip') ? 'build the release zips with `make lambda-zip`' : 'synthesize the app again (`cdk synth`) so cdk.out holds its asset'}, then start the rehearsal again`]);
    }
    const password = consumerPassword(secrets, c.user);
    if (password === undefined) throw new RehearsalConfigError([`consumer ${c.name}: user ${c.user} has no login in this rehearsal's secrets`]);
    const serverName = c.tlsServerEndpoint === undefined ? undefined : endpoints.find((e) => e.name === c.tlsServerEndpoint)?.host;
    const env = {
      ...consumerEnvironment({
        host: endpoint.host,
        // The fleet's interface endpoints carry its load balancer's listener of the consumer's role.
        port: deployment.fleet !== undefined ? POOLER_LISTENER_PORTS[c.role] : settings.port,
        database: c.database,
        user: c.user,
        endpointRole: c.role,
        auth: { kind: 'password', password },
        tls: { mode: c.tlsMode, caFile, ...(serverName !== undefined ? { serverName } : {}) },
        connectionMode: c.connectionMode,
        logLevel: 'SILENT',
      }),
      [ENV_VARS.functionName]: c.name,
    };
    return {
      name: c.name,
      role: c.role,
      handler: c.role === 'READ_ONLY' ? 'read' : 'write',
      namespace: endpoint.namespace,
      endpointHost: endpoint.host,
      endpointAddress: endpoint.address,
      env,
      ...(c.code !== undefined ? { code: c.code } : {}),
      ...(c.functionHandler !== undefined ? { functionHandler: c.functionHandler } : {}),
    };
  });
}
