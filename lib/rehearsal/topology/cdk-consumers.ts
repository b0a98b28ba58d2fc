/**
 * The consumer functions of a cloud assembly: every AWS::Lambda::Function whose environment follows the
 * consumers' contract, with DB_HOST and DB_TLS_SERVER_NAME resolved to the proxy endpoint they name.
 */
import { ENV_VARS } from '../../../lambda/src/environment';
import { assetDirectory, type CloudAssemblyIndex, type StackTemplate } from '../../cloud-assembly';
import { describeResolved, interfaceEndpointOfHost, resolveValue, vpcOfSubnets } from '../../cloud-assembly/intrinsics';
import { compact, defaultEndpointId } from './build';
import { consumerConnection, contractEnvironment, isConsumerEnvironment } from './consumer-contract';
import type { ConsumerTopology, EnvValue, FunctionCode, ProxyEndpointTopology, ProxyTopology } from './types';

/** A proxy's host name attribute (the same for a DBProxy and a DBProxyEndpoint). */
const HOST_ATTRIBUTE = 'Endpoint';

function envValue(assembly: CloudAssemblyIndex, stack: StackTemplate, raw: unknown, proxy: ProxyTopology, endpoints: ReadonlyArray<ProxyEndpointTopology>): EnvValue {
  // The PgBouncer engine's consumers name an interface endpoint of the fleet's endpoint service by its DNS entry.
  const interfaceEndpoint = interfaceEndpointOfHost(assembly, stack, raw);
  const named = interfaceEndpoint === undefined ? undefined : endpoints.find((e) => e.id === interfaceEndpoint.id);
  if (named !== undefined) return { kind: 'endpoint-host', endpoint: named.id };
  const resolved = resolveValue(assembly, stack, raw);
  if (resolved.kind === 'literal') return { kind: 'literal', value: String(resolved.value) };
  if (resolved.kind === 'resource' && resolved.attribute === HOST_ATTRIBUTE) {
    const id = resolved.target.id === proxy.id ? defaultEndpointId(proxy.id) : resolved.target.id;
    if (endpoints.some((e) => e.id === id)) return { kind: 'endpoint-host', endpoint: id };
  }
  return { kind: 'unknown', detail: describeResolved(resolved) };
}

export function readCdkConsumers(assembly: CloudAssemblyIndex, proxy: ProxyTopology, endpoints: ReadonlyArray<ProxyEndpointTopology>, notes: string[]): ConsumerTopology[] {
  return assembly.ofType('AWS::Lambda::Function').flatMap((fn): ConsumerTopology[] => {
    const props = fn.resource.Properties ?? {};
    const variables = ((props.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {}) as Record<string, unknown>;
    if (!isConsumerEnvironment(Object.keys(variables))) return [];
    const all = Object.fromEntries(Object.entries(variables).map(([name, raw]) => [name, envValue(assembly, fn.stack, raw, proxy, endpoints)]));
    const environment = contractEnvironment(all);
    const { connection, notes: connectionNotes } = consumerConnection(environment, { file: fn.stack.file, consumer: fn.id });
    notes.push(...connectionNotes);
    const host = environment[ENV_VARS.host];
    if (host?.kind !== 'endpoint-host') notes.push(`consumer ${fn.id}: ${ENV_VARS.host} is not an endpoint of proxy ${proxy.id} (${host?.kind === 'unknown' ? host.detail : JSON.stringify(host)})`);
    const vpcConfig = props.VpcConfig as { SubnetIds?: unknown } | undefined;
    const network = vpcConfig ? vpcOfSubnets(assembly, fn.stack, vpcConfig.SubnetIds) : { problem: 'it has no VpcConfig' };
    if (network.problem) notes.push(`VPC of ${fn.id} unknown: ${network.problem}`);
    const functionName = resolveValue(assembly, fn.stack, props.FunctionName);
    // No code when the assembly was synthesized without building its bundles (the asset directory is absent):
    // the rehearsal then runs the kit's own handler for the function's role (deploymentConsumers).
    const bundle = assetDirectory(fn, 'Code');
    const code = bundle === undefined ? undefined : compact<FunctionCode>({ path: bundle, handler: typeof props.Handler === 'string' ? props.Handler : undefined });
    return [
      compact<ConsumerTopology>({
        id: fn.id,
        functionName: functionName.kind === 'literal' ? String(functionName.value) : undefined,
        vpc: network.vpc,
        endpoint: host?.kind === 'endpoint-host' ? host.endpoint : undefined,
        environment,
        connection,
        code,
      }),
    ];
  });
}
