/**
 * The PgBouncer engine's fleet in a Terraform plan (the pgbouncer-proxy module): its Auto Scaling group, the
 * launch template's user data and the interface endpoints of its endpoint service.
 *
 * The user data is `templatefile` of the module's own template, unknown at plan. The template is read where
 * Terraform reads the module from (the root's module manifest, `.terraform/modules/modules.json`, maps the
 * module's key to its directory); its values are the module's `bootstrap_variables` output as Terraform planned
 * it, which plan JSON carries only through a root output: the values known at plan are literals, the ones known
 * after apply (endpoints, secrets' ARNs) are the rehearsal's to fill, as it fills CloudFormation's. The
 * endpoints' roles come the same way, from the module's `endpoints` output.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { ENDPOINT_ROLES, EndpointRole } from '../../../lambda/src/environment';
import type { PlanIndex, PlanResource } from '../../terraform/plan-index';
import type { PlanNetwork } from '../../terraform/plan-network';
import type { ReferenceTracer } from '../../terraform/plan-references';
import { compact, exactlyOne, fleetTier, type PoolingTier } from './build';
import { TopologyInputError } from './errors';
import type { ClusterTopology, EnvValue, ProxyEndpointTopology } from './types';

/**
 * Where `terraform plan` ran: the root module's directory (`-chdir`, else the working directory) and its data
 * directory (TF_DATA_DIR, relative to the root's directory; `.terraform` when unset), as Terraform finds them.
 */
export interface TerraformWorkingDir {
  readonly dir: string;
  readonly dataDir?: string;
}

/** The pgbouncer-proxy module's template, relative to the module's directory (its templatefile call). */
export const PGBOUNCER_MODULE_TEMPLATE = join('templates', 'bootstrap.sh.tftpl');

/** The module outputs the reader needs, which plan JSON carries only when the root module outputs them. */
const BOOTSTRAP_OUTPUT = 'bootstrap_variables';
const ENDPOINTS_OUTPUT = 'endpoints';

interface ModuleManifest {
  readonly Modules?: ReadonlyArray<{ readonly Key?: string; readonly Dir?: string }>;
}

/** The module's directory as Terraform resolves it: its key (`a.b` for module.a.module.b) in the root's modules.json. */
function moduleDirectory(index: PlanIndex, modulePath: ReadonlyArray<string>, root: TerraformWorkingDir): string {
  const dataDir = root.dataDir === undefined ? join(root.dir, '.terraform') : isAbsolute(root.dataDir) ? root.dataDir : resolve(root.dir, root.dataDir);
  const manifest = join(dataDir, 'modules', 'modules.json');
  const fix = 'run rehearse where `terraform init` and `terraform plan` ran: pass --terraform-dir <the root module\'s directory> (default: the plan JSON\'s directory) and keep TF_DATA_DIR as it was for the plan';
  if (!existsSync(manifest)) throw new TopologyInputError(index.file, `no module manifest ${manifest}, so the PgBouncer engine's module (and its user data template) cannot be found`, fix, (f, p) => `${f}: ${p}`);
  let parsed: ModuleManifest;
  try {
    parsed = JSON.parse(readFileSync(manifest, 'utf8')) as ModuleManifest;
  } catch (err) {
    throw new TopologyInputError(manifest, `not JSON (${err instanceof Error ? err.message : String(err)})`, 'run `terraform init` again in the root module\'s directory');
  }
  const key = modulePath.join('.');
  const entry = parsed.Modules?.find((m) => m.Key === key);
  if (entry?.Dir === undefined) throw new TopologyInputError(manifest, `no module "${key}" (the module of ${modulePath.map((m) => `module.${m}`).join('.')})`, `run \`terraform init\` in the root module the plan was made from (${root.dir}), then plan again`);
  return resolve(root.dir, entry.Dir);
}

function missingOutput(index: PlanIndex, modulePath: ReadonlyArray<string>, output: string, why: string): TopologyInputError {
  const call = modulePath.map((m) => `module.${m}`).join('.');
  const fix =
    modulePath.length === 1
      ? `add to the root module: output "${output}" { value = ${call}.${output} }, then plan again`
      : `call the pgbouncer-proxy module from the root module, and output "${output}" { value = module.<name>.${output} } there`;
  return new TopologyInputError(index.file, `the root module outputs no ${call}.${output}, which ${why}`, fix);
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The template's values: literals Terraform planned, or `unknown` for those known after apply. */
function templateValues(index: PlanIndex, group: PlanResource, template: string, templateFile: string): Record<string, EnvValue> {
  const output = index.moduleOutput(group.modulePath, BOOTSTRAP_OUTPUT);
  if (output === undefined) throw missingOutput(index, group.modulePath, BOOTSTRAP_OUTPUT, 'holds the values Terraform renders the hosts\' user data with (plan JSON carries a module\'s values only through the root\'s outputs)');
  const known = isRecord(output.after) ? output.after : {};
  const later = isRecord(output.afterUnknown) ? output.afterUnknown : output.afterUnknown === true ? undefined : {};
  const values: Record<string, EnvValue> = {};
  const missing: string[] = [];
  for (const name of new Set([...template.matchAll(/\$\{([A-Za-z0-9]+)\}/g)].map((m) => m[1]!))) {
    const value = known[name];
    if (typeof value === 'string') values[name] = { kind: 'literal', value };
    else if (later === undefined || later[name] === true) values[name] = { kind: 'unknown', detail: `output ${output.name}["${name}"] (known after apply)` };
    else missing.push(name);
  }
  if (missing.length > 0) {
    throw new TopologyInputError(index.file, `output ${output.name} has no ${missing.join(', ')}, which ${templateFile} substitutes`, 'plan with the pgbouncer-proxy module of the same version as its template (the module gives each of the template\'s values)');
  }
  return values;
}

export function readPlanFleet(index: PlanIndex, tracer: ReferenceTracer, network: PlanNetwork, cluster: ClusterTopology, root: TerraformWorkingDir, notes: string[]): PoolingTier {
  const type = 'aws_autoscaling_group';
  const group = exactlyOne(index.managed(type), (r) => r.address, type, index.file, 'the PgBouncer engine\'s Auto Scaling group (the pgbouncer-proxy module)', 'plan a configuration');
  if (group.modulePath.length === 0) throw new TopologyInputError(index.file, `Auto Scaling group ${group.address} is not in a module`, 'deploy the PgBouncer engine with the kit\'s pgbouncer-proxy module: rehearse boots its hosts from that module\'s template');

  // The user data template, read where Terraform reads the module.
  const templateFile = join(moduleDirectory(index, group.modulePath, root), PGBOUNCER_MODULE_TEMPLATE);
  if (!existsSync(templateFile)) throw new TopologyInputError(index.file, `${group.address}'s module has no ${PGBOUNCER_MODULE_TEMPLATE} (looked for ${templateFile})`, 'deploy the PgBouncer engine with the kit\'s pgbouncer-proxy module, whose launch template renders that template');
  const template = readFileSync(templateFile, 'utf8');
  const values = templateValues(index, group, template, templateFile);
  notes.push(`user data of ${group.address}: templatefile of ${templateFile}, values from the root's output of module.${group.modulePath.join('.module.')}.${BOOTSTRAP_OUTPUT}`);

  const desired = group.values.desired_capacity ?? group.values.min_size;
  if (typeof desired !== 'number' || desired < 1) throw new TopologyInputError(index.file, `Auto Scaling group ${group.address} has no desired_capacity or min_size known at plan`, 'give the fleet a fixed host count (the module\'s hosts)');

  // The interface endpoints of the fleet's endpoint service, each with its role from the module's endpoints output.
  const services = new Set(index.managed('aws_vpc_endpoint_service').map((s) => s.address));
  const interfaceEndpoints = index.managed('aws_vpc_endpoint').filter((e) => tracer.traceArgument(e, ['service_name']).some((t) => tracer.instancesOf(t).some((r) => services.has(r.address))));
  const described = interfaceEndpoints.length === 0 ? undefined : index.moduleOutput(group.modulePath, ENDPOINTS_OUTPUT);
  if (interfaceEndpoints.length > 0 && described === undefined) throw missingOutput(index, group.modulePath, ENDPOINTS_OUTPUT, 'gives each interface endpoint its role (plan JSON carries a module\'s values only through the root\'s outputs)');
  const roles = isRecord(described?.after) ? described.after : {};
  const endpointVpcProblems = new Map<string, string>();
  const endpoints = interfaceEndpoints.map((e): ProxyEndpointTopology => {
    const key = String(e.index ?? e.name);
    const role = isRecord(roles[key]) ? roles[key].target_role : undefined;
    if (typeof role !== 'string' || !(ENDPOINT_ROLES as readonly string[]).includes(role)) {
      throw new TopologyInputError(index.file, `output ${described!.name} gives interface endpoint ${e.address} ${role === undefined ? 'no target_role' : `target_role ${String(role)}`}`, `give each of the module's endpoints a role: one of ${ENDPOINT_ROLES.join(', ')}`);
    }
    const where = network.vpcOf(e);
    if (where.problem) endpointVpcProblems.set(e.address, where.problem);
    return compact<ProxyEndpointTopology>({ id: e.address, name: key, role: role as EndpointRole, isDefault: false, vpc: where.vpc });
  });

  const name = values.FleetName?.kind === 'literal' ? values.FleetName.value : group.address;
  // The load balancer is the fleet's own endpoint in the data VPC.
  const placement = network.vpcOf(group);
  if (placement.problem) notes.push(`VPC of ${group.address} unknown (${placement.problem}); taken as the cluster's`);
  return fleetTier({ id: group.address, hosts: desired, userData: template, values, renderer: 'terraform-templatefile' }, name, placement.vpc ?? cluster.vpc, endpoints, endpointVpcProblems);
}
