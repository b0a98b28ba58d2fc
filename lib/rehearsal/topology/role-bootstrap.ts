/**
 * The deployment's role bootstrap (DatabaseRoleBootstrap's `Custom::DatabaseRoles`, the
 * database-role-bootstrap module's `aws_lambda_invocation`), read from either flavour: the roles it makes
 * are the only database roles the rehearsal makes, so a deployment without one rehearses consumers whose
 * logins fail, as they would on AWS.
 */
import { EndpointRole } from '../../../lambda/src/environment';
import type { CloudAssemblyIndex } from '../../cloud-assembly';
import { describeResolved, literalString, resolveValue } from '../../cloud-assembly/intrinsics';
import type { PlanIndex } from '../../terraform/plan-index';
import type { RoleBootstrapTopology, TopologyRole } from './types';

/** The custom resource type DatabaseRoleBootstrap makes (lib/database-role-bootstrap.ts). */
export const ROLE_BOOTSTRAP_RESOURCE_TYPE = 'Custom::DatabaseRoles';
/** The module the Terraform flavour makes roles with, as a module call's source ends. */
const ROLE_BOOTSTRAP_MODULE = 'database-role-bootstrap';

/** `{ name, access }` of a request's role when both are literal; why not otherwise. */
function roleOf(raw: unknown, literal: (v: unknown) => string | undefined): TopologyRole | string {
  if (raw === null || typeof raw !== 'object') return 'a role that is not an object';
  const r = raw as Record<string, unknown>;
  const name = literal(r.name);
  const access = literal(r.access);
  if (name === undefined) return 'a role whose name is known only at deploy time';
  if (access !== EndpointRole.READ_ONLY && access !== EndpointRole.READ_WRITE) return `role ${name} with access ${String(access)}`;
  return { name, access };
}

/** The request's roles, or why they cannot be read; notes say which resource was read. */
function requestRoles(id: string, request: unknown, literal: (v: unknown) => string | undefined, notes: string[]): RoleBootstrapTopology {
  const rawRoles = request !== null && typeof request === 'object' ? (request as Record<string, unknown>).roles : undefined;
  const database = request !== null && typeof request === 'object' ? literal((request as Record<string, unknown>).database) : undefined;
  if (!Array.isArray(rawRoles)) {
    notes.push(`role bootstrap ${id}: its roles are known only at deploy time; the rehearsal makes the consumers' users as its roles`);
    return { id, ...(database !== undefined ? { database } : {}) };
  }
  const roles: TopologyRole[] = [];
  for (const raw of rawRoles) {
    const role = roleOf(raw, literal);
    if (typeof role === 'string') {
      notes.push(`role bootstrap ${id}: ${role} is left out (not readable from the input)`);
      continue;
    }
    roles.push(role);
  }
  return { id, ...(database !== undefined ? { database } : {}), roles };
}

/** Every `Custom::DatabaseRoles` of the assembly (several are one bootstrap each, their roles together). */
export function readCdkRoleBootstraps(assembly: CloudAssemblyIndex, notes: string[]): RoleBootstrapTopology[] {
  return assembly.ofType(ROLE_BOOTSTRAP_RESOURCE_TYPE).map((r) => {
    const literal = (v: unknown): string | undefined => literalString(resolveValue(assembly, r.stack, v));
    const request = r.resource.Properties?.Request;
    if (request === null || typeof request !== 'object' || Array.isArray(request)) {
      notes.push(`role bootstrap ${r.id}: its Request is ${describeResolved(resolveValue(assembly, r.stack, request))}, not the kit's request`);
      return { id: r.id };
    }
    return requestRoles(r.id, request, literal, notes);
  });
}

/** A module call's source naming the module: a relative path, or a git source with `//modules/<name>?ref=`. */
function isRoleBootstrapSource(source: string | undefined): boolean {
  const path = (source ?? '').replace(/\?.*$/, '').replace(/\/+$/, '');
  return path === ROLE_BOOTSTRAP_MODULE || path.endsWith(`/${ROLE_BOOTSTRAP_MODULE}`);
}

/** Every invocation of the database-role-bootstrap module in the plan; its input is JSON when known at plan. */
export function readPlanRoleBootstraps(index: PlanIndex, notes: string[]): RoleBootstrapTopology[] {
  return index
    .managed('aws_lambda_invocation')
    .filter((r) => r.modulePath.length > 0 && isRoleBootstrapSource(index.moduleCall(r.modulePath)?.source))
    .map((r) => {
      const input = r.values.input;
      let request: unknown;
      if (typeof input === 'string') {
        try {
          request = JSON.parse(input);
        } catch {
          request = undefined;
        }
      }
      const literal = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
      // The input waits for the secrets' ARNs; the module's `roles` trigger (name:access,...) is known at plan.
      const triggered = (r.values.triggers as Record<string, unknown> | null | undefined)?.roles;
      if (request === undefined && typeof triggered === 'string') {
        const roles = triggered === '' ? [] : triggered.split(',').map((pair) => ({ name: pair.slice(0, pair.lastIndexOf(':')), access: pair.slice(pair.lastIndexOf(':') + 1) }));
        request = { roles };
      }
      return requestRoles(r.address, request, literal, notes);
    });
}
