/**
 * The consumer functions of a plan: every aws_lambda_function whose environment follows the consumers'
 * contract. Endpoint host names are known only after apply, so DB_HOST and DB_TLS_SERVER_NAME are
 * resolved through the configuration: the environment's references lead to the proxy's endpoints (the
 * lambda-consumer module reads them from the rds-proxy module's `endpoints` output), and the contract
 * narrows them: DB_ENDPOINT_ROLE is the endpoint's role, DB_TLS says default endpoint (verify-full) or
 * another one (verify-proxy-domain), and DB_TLS_SERVER_NAME is always the proxy's default endpoint.
 * A known host name (a plan of a deployment that exists) is matched directly.
 */
import { existsSync } from 'node:fs';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { ENV_VARS, type DbTlsMode } from '../../../lambda/src/environment';
import type { PlanIndex, PlanResource } from '../../terraform/plan-index';
import { valueAt } from '../../terraform/plan-json';
import type { PlanNetwork } from '../../terraform/plan-network';
import type { ReferenceTracer } from '../../terraform/plan-references';
import { compact, defaultEndpointId } from './build';
import { consumerConnection, contractEnvironment, isConsumerEnvironment } from './consumer-contract';
import type { ConsumerTopology, EnvValue, ProxyEndpointTopology, ProxyTopology } from './types';

interface Context {
  readonly index: PlanIndex;
  readonly tracer: ReferenceTracer;
  readonly network: PlanNetwork;
  readonly proxy: ProxyTopology;
  readonly endpoints: ReadonlyArray<ProxyEndpointTopology>;
  readonly notes: string[];
  /**
   * The pooling tier: RDS Proxy's consumers reach a non-default endpoint with verify-proxy-domain; the PgBouncer
   * engine's reach its interface endpoints (never its load balancer, in the data VPC) with verify-full.
   * @default 'rds-proxy'
   */
  readonly engine?: 'rds-proxy' | 'pgbouncer';
  /** Where relative paths of the plan (a function's filename) are resolved. */
  readonly planDir: string;
}

/** The endpoint ids the function's environment expression reaches through the configuration. */
function referencedEndpoints(ctx: Context, fn: PlanResource): ProxyEndpointTopology[] {
  const ids = new Set<string>();
  for (const terminal of ctx.tracer.traceArgument(fn, ['environment', 0, 'variables'])) {
    for (const r of ctx.tracer.instancesOf(terminal)) {
      if (r.type === 'aws_db_proxy' && r.address === ctx.proxy.id) ids.add(defaultEndpointId(r.address));
      if (r.type === 'aws_db_proxy_endpoint' || r.type === 'aws_vpc_endpoint') ids.add(r.address);
    }
  }
  return ctx.endpoints.filter((e) => ids.has(e.id));
}

/** The endpoint whose host name is `host`, when the plan knows endpoint host names (after apply). */
function endpointByHost(ctx: Context, host: string): ProxyEndpointTopology | undefined {
  const owner = ctx.index.resources.find((r) => (r.type === 'aws_db_proxy_endpoint' || r.type === 'aws_db_proxy') && r.values.endpoint === host);
  if (!owner) return ctx.endpoints.find((e) => ctx.index.resources.some((r) => r.address === e.id && r.type === 'aws_vpc_endpoint' && valueAt(r.values, ['dns_entry', 0, 'dns_name']) === host));
  const id = owner.type === 'aws_db_proxy' ? defaultEndpointId(owner.address) : owner.address;
  return ctx.endpoints.find((e) => e.id === id);
}

function narrowHost(ctx: Context, fn: PlanResource, candidates: ProxyEndpointTopology[], role: string | undefined, tls: DbTlsMode | undefined, vpc: string | undefined): EnvValue {
  const wantDefault = ctx.engine !== 'pgbouncer' && (tls === undefined || tls === 'verify-full');
  const fitting = candidates.filter((e) => e.isDefault === wantDefault && e.role === role && (e.vpc === undefined || vpc === undefined || e.vpc === vpc));
  const listed = candidates.map((e) => e.id).join(', ') || 'no endpoint of the proxy';
  if (fitting.length === 1) {
    ctx.notes.push(`consumer ${fn.address}: ${ENV_VARS.host} is known only after apply; its environment references ${listed}, of which only ${fitting[0]!.id} fits ${ENV_VARS.endpointRole}=${role} and ${ENV_VARS.tls}=${tls ?? 'verify-full'}`);
    return { kind: 'endpoint-host', endpoint: fitting[0]!.id };
  }
  const detail = fitting.length > 1 ? `one of ${fitting.map((e) => e.id).join(', ')} (each fits its role and TLS mode; known after apply)` : `known after apply; none of ${listed} fits ${ENV_VARS.endpointRole}=${role}`;
  ctx.notes.push(`consumer ${fn.address}: ${ENV_VARS.host} is ${detail}`);
  return { kind: 'unknown', detail };
}

/** The kit's release zips, as `make lambda-zip` writes them. */
const RELEASE_ZIP_DIR = join(__dirname, '..', '..', '..', 'dist', 'lambda');
const RELEASE_ZIPS = ['read-handler.zip', 'write-handler.zip', 'role-bootstrap.zip', 'pooler-certificate.zip'];

/**
 * A function's `filename` on this machine. The plan holds it as the configuration evaluated it, relative to the
 * root module terraform ran in, which the plan does not record: tried beside the plan JSON, then here, then, for
 * one of the kit's release zips, where `make lambda-zip` writes it. Not found: beside the plan, so running it
 * fails naming the path.
 */
function locateFilename(ctx: Context, fn: PlanResource, filename: string): string {
  if (isAbsolute(filename)) return filename;
  const found = [join(ctx.planDir, filename), resolve(filename)].find((p) => existsSync(p));
  if (found !== undefined) return found;
  const release = join(RELEASE_ZIP_DIR, basename(filename));
  if (RELEASE_ZIPS.includes(basename(filename)) && existsSync(release)) {
    ctx.notes.push(`code of ${fn.address}: ${filename} is relative to the directory terraform ran in, which the plan does not record; the kit's release zip ${release} is taken for it`);
    return release;
  }
  ctx.notes.push(`code of ${fn.address}: ${filename} is found neither beside the plan nor here: build the release zips with \`make lambda-zip\`, or write the plan JSON in the directory terraform ran in`);
  return join(ctx.planDir, filename);
}

function readConsumer(ctx: Context, fn: PlanResource): ConsumerTopology | undefined {
  const known = (valueAt(fn.values, ['environment', 0, 'variables']) ?? {}) as Record<string, unknown>;
  const later = (valueAt(fn.unknown, ['environment', 0, 'variables']) ?? {}) as Record<string, unknown>;
  const names = [...new Set([...Object.keys(known), ...Object.keys(later).filter((k) => later[k] === true)])];
  if (!isConsumerEnvironment(names)) return undefined;
  const placement = ctx.network.vpcOf(fn);
  if (placement.problem) ctx.notes.push(`VPC of ${fn.address} unknown: ${placement.problem}`);
  const candidates = referencedEndpoints(ctx, fn);
  const literal = (name: string): string | undefined => (typeof known[name] === 'string' ? (known[name] as string) : undefined);
  const env: Record<string, EnvValue> = {};
  for (const name of names) {
    const value = literal(name);
    const byHost = value !== undefined && (name === ENV_VARS.host || name === ENV_VARS.tlsServerName) ? endpointByHost(ctx, value) : undefined;
    if (byHost) env[name] = { kind: 'endpoint-host', endpoint: byHost.id };
    else if (value !== undefined) env[name] = { kind: 'literal', value };
    else if (name === ENV_VARS.host) env[name] = narrowHost(ctx, fn, candidates, literal(ENV_VARS.endpointRole), literal(ENV_VARS.tls) as DbTlsMode | undefined, placement.vpc);
    else if (name === ENV_VARS.tlsServerName) {
      const defaults = candidates.filter((e) => e.isDefault);
      env[name] = defaults.length === 1 ? { kind: 'endpoint-host', endpoint: defaults[0]!.id } : { kind: 'unknown', detail: 'known after apply; its references name no single proxy default endpoint' };
    } else env[name] = { kind: 'unknown', detail: 'known after apply' };
  }
  const environment = contractEnvironment(env);
  const { connection, notes } = consumerConnection(environment, { file: ctx.index.file, consumer: fn.address });
  ctx.notes.push(...notes);
  const host = environment[ENV_VARS.host];
  const functionName = fn.values.function_name;
  const filename = fn.values.filename;
  const handler = fn.values.handler;
  const code = typeof filename === 'string' ? { path: locateFilename(ctx, fn, filename), ...(typeof handler === 'string' ? { handler } : {}) } : undefined;
  if (code === undefined) ctx.notes.push(`code of ${fn.address} unknown: it has no filename (an S3 object or an image is not read here)`);
  return compact<ConsumerTopology>({
    id: fn.address,
    functionName: typeof functionName === 'string' ? functionName : undefined,
    vpc: placement.vpc,
    endpoint: host?.kind === 'endpoint-host' ? host.endpoint : undefined,
    environment,
    connection,
    code,
  });
}

export function readPlanConsumers(ctx: Context): ConsumerTopology[] {
  return ctx.index.managed('aws_lambda_function').flatMap((fn) => {
    const consumer = readConsumer(ctx, fn);
    return consumer ? [consumer] : [];
  });
}

/**
 * Places endpoints the plan does not (their VPC comes from a local value, which plan JSON does not
 * carry) in the VPC of the consumers that reach them: the lambda-consumer module puts a function in its
 * endpoint's VPC (its vpc_id is "the proxy endpoint's VPC"). Endpoints without consumers stay unplaced.
 */
export function placeEndpointsByConsumers(endpoints: ReadonlyArray<ProxyEndpointTopology>, consumers: ReadonlyArray<ConsumerTopology>, problems: ReadonlyMap<string, string>, notes: string[]): ProxyEndpointTopology[] {
  return endpoints.map((e) => {
    if (e.vpc !== undefined) return e;
    const reaching = consumers.filter((c) => c.endpoint === e.id);
    const vpcs = [...new Set(reaching.map((c) => c.vpc).filter((v): v is string => v !== undefined))];
    const why = problems.get(e.id) ?? 'the plan does not say';
    if (vpcs.length !== 1) {
      notes.push(`VPC of ${e.id} unknown: ${why}${reaching.length === 0 ? '; no consumer reaches it' : ''}`);
      return e;
    }
    notes.push(`VPC of ${e.id} taken from its consumer(s) ${reaching.map((c) => c.id).join(', ')} (a consumer lies in its endpoint's VPC); the plan itself does not say: ${why}`);
    return { ...e, vpc: vpcs[0] };
  });
}
