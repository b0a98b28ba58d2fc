/**
 * What the role bootstrap is asked to make, and the checks of that request: the part of the bootstrap
 * the CDK construct runs at synth time, kept apart from role-bootstrap.ts so that it loads without pg
 * (the published construct library ships compiled JavaScript and no database driver).
 */
import { ENDPOINT_ROLES, type EndpointRole } from './environment';

/** One consumer role: its name, whether it reads only or also writes, and how it logs in. */
export interface DatabaseRoleSpec {
  readonly name: string;
  readonly access: EndpointRole;
  /**
   * A Secrets Manager secret ({"username", "password"}) the role logs in with instead of an IAM token:
   * the PgBouncer engine's consumers (PgBouncer cannot check IAM tokens). The role's password becomes the
   * SCRAM verifier derived from the secret (scram-salt.ts), the one the pooler hosts hold too.
   * Absent: IAM authentication only (`rds_iam`).
   */
  readonly passwordSecretArn?: string;
}

/** What the bootstrap is asked to make (the custom resource's properties, the invocation's input). */
export interface RoleBootstrapRequest {
  readonly database: string;
  readonly roles: ReadonlyArray<DatabaseRoleSpec>;
  readonly schema?: string;
}

/** Lower-case identifiers only, so the name is the same quoted or not; 63 bytes is PostgreSQL's NAMEDATALEN - 1. */
export const ROLE_NAME_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;
/** Prefixes PostgreSQL (pg_) and RDS (rds_, rdsadmin) keep for their own roles. */
export const RESERVED_ROLE_PREFIXES = ['pg_', 'rds'] as const;
/** The role RDS grants IAM database authentication through. */
export const RDS_IAM_ROLE = 'rds_iam';
export const DEFAULT_SCHEMA = 'public';
/** A Secrets Manager secret's ARN (any partition). */
export const SECRET_ARN_PATTERN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$/;

/** Problems with a request, each naming the value and the fix; empty when valid. */
export function requestProblems(request: RoleBootstrapRequest, masterUser?: string): string[] {
  const problems: string[] = [];
  if (!ROLE_NAME_PATTERN.test(request.database)) problems.push(`database ${JSON.stringify(request.database)} is not a lower-case identifier`);
  if (request.roles.length === 0) problems.push('roles is empty: name at least one consumer role');
  const seen = new Set<string>();
  for (const { name, access, passwordSecretArn } of request.roles) {
    if (!ROLE_NAME_PATTERN.test(name)) problems.push(`role name ${JSON.stringify(name)} must match ${ROLE_NAME_PATTERN.source}`);
    if (RESERVED_ROLE_PREFIXES.some((p) => name.startsWith(p))) problems.push(`role name ${name} starts with ${RESERVED_ROLE_PREFIXES.join(' or ')}, kept for PostgreSQL's and RDS's own roles`);
    if (name === masterUser) problems.push(`role name ${name} is the master user: consumers get roles of their own`);
    if (!(ENDPOINT_ROLES as ReadonlyArray<string>).includes(access)) problems.push(`role ${name} access ${JSON.stringify(access)} must be one of ${ENDPOINT_ROLES.join(', ')}`);
    if (seen.has(name)) problems.push(`role name ${name} appears twice`);
    if (passwordSecretArn !== undefined && !SECRET_ARN_PATTERN.test(passwordSecretArn)) problems.push(`role ${name} passwordSecretArn ${JSON.stringify(passwordSecretArn)} is not a Secrets Manager secret ARN: use arn:<partition>:secretsmanager:<region>:<account>:secret:<name>`);
    seen.add(name);
  }
  return problems;
}

/** Environment of the bootstrap function: where the writer is and which secret holds the master user. */
export const BOOTSTRAP_ENV = {
  host: 'DB_HOST',
  port: 'DB_PORT',
  masterSecretArn: 'DB_MASTER_SECRET_ARN',
} as const;
