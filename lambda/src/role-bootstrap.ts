/**
 * The database-role bootstrap: runs at deploy time (a CloudFormation custom resource in CDK, an
 * aws_lambda_invocation in Terraform), logs in to the cluster's writer as the master user and makes
 * one least-privilege role per consumer, so no consumer logs in as the master user.
 *
 * Each role may log in only with an IAM token (`GRANT rds_iam`: "If a user is a member of the rds_iam
 * role, then they can only log in using IAM database authentication", Aurora user guide,
 * UsingWithRDS.IAMDBAuth.DBAccounts). A READ_ONLY role gets SELECT and a read-only default
 * transaction; a READ_WRITE role gets DML and CREATE on the schema (the write consumer creates its
 * table on first use), and every READ_ONLY role may read the tables a READ_WRITE role creates.
 *
 * Every statement is idempotent, and a role that already exists is brought back to these attributes.
 * Roles are never dropped: on delete they stay, with whatever they own.
 */
import { Client, escapeIdentifier, type ClientBase } from 'pg';
import { ConfigError } from './errors';
import { derivedScramVerifier } from './scram-salt';
import { readSecretCredentials } from './secret-credentials';
import {
  BOOTSTRAP_ENV,
  DEFAULT_SCHEMA,
  RDS_IAM_ROLE,
  requestProblems,
  type DatabaseRoleSpec,
  type RoleBootstrapRequest,
} from './role-bootstrap-request';

// The request and its checks, which the CDK construct runs without pg, live in role-bootstrap-request.ts.
export * from './role-bootstrap-request';

/** The request cannot be carried out as asked; the message names the value and the fix. */
export class RoleBootstrapError extends Error {
  override readonly name = 'RoleBootstrapError';
}

/**
 * The statements that make one role, in order. Attributes a non-superuser master cannot set
 * (SUPERUSER, REPLICATION, BYPASSRLS) are checked before, not set: RDS's master user is not a superuser.
 */
export function roleStatements(role: DatabaseRoleSpec, request: RoleBootstrapRequest, verifier?: string): string[] {
  const r = escapeIdentifier(role.name);
  const schema = escapeIdentifier(request.schema ?? DEFAULT_SCHEMA);
  if ((role.passwordSecretArn === undefined) !== (verifier === undefined)) throw new RoleBootstrapError(`role ${role.name}: a password secret and its verifier go together`);
  // IAM only, or the secret's derived verifier: a member of rds_iam can log in with IAM tokens only.
  const login =
    verifier === undefined
      ? [`ALTER ROLE ${r} WITH LOGIN INHERIT NOCREATEDB NOCREATEROLE CONNECTION LIMIT -1 PASSWORD NULL`, `GRANT ${escapeIdentifier(RDS_IAM_ROLE)} TO ${r}`]
      : [`ALTER ROLE ${r} WITH LOGIN INHERIT NOCREATEDB NOCREATEROLE CONNECTION LIMIT -1 PASSWORD ${literal(verifier)}`, `REVOKE ${escapeIdentifier(RDS_IAM_ROLE)} FROM ${r}`];
  const common = [
    ...login,
    `GRANT CONNECT ON DATABASE ${escapeIdentifier(request.database)} TO ${r}`,
    `GRANT USAGE ON SCHEMA ${schema} TO ${r}`,
  ];
  if (role.access === 'READ_ONLY') {
    return [
      ...common,
      `ALTER ROLE ${r} SET default_transaction_read_only = on`,
      `GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${r}`,
      `ALTER DEFAULT PRIVILEGES IN SCHEMA ${schema} GRANT SELECT ON TABLES TO ${r}`,
    ];
  }
  return [
    ...common,
    `ALTER ROLE ${r} RESET default_transaction_read_only`,
    `GRANT CREATE ON SCHEMA ${schema} TO ${r}`,
    `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${r}`,
    `GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${schema} TO ${r}`,
    `ALTER DEFAULT PRIVILEGES IN SCHEMA ${schema} GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${r}`,
    `ALTER DEFAULT PRIVILEGES IN SCHEMA ${schema} GRANT USAGE, SELECT ON SEQUENCES TO ${r}`,
  ];
}

/**
 * Tables a READ_WRITE role creates (the write consumer's kit_events) are readable by every READ_ONLY
 * role. Default privileges FOR ROLE need membership in that role, so the master user joins it.
 */
export function readAccessStatements(request: RoleBootstrapRequest): string[] {
  const schema = escapeIdentifier(request.schema ?? DEFAULT_SCHEMA);
  const writers = request.roles.filter((r) => r.access === 'READ_WRITE').map((r) => escapeIdentifier(r.name));
  const readers = request.roles.filter((r) => r.access === 'READ_ONLY').map((r) => escapeIdentifier(r.name));
  if (writers.length === 0 || readers.length === 0) return [];
  return writers.flatMap((w) => [
    `GRANT ${w} TO CURRENT_USER`,
    `ALTER DEFAULT PRIVILEGES FOR ROLE ${w} IN SCHEMA ${schema} GRANT SELECT ON TABLES TO ${readers.join(', ')}`,
  ]);
}

/** A SCRAM verifier as a SQL literal: base64, '$', ':' and digits only, checked, so nothing needs escaping. */
function literal(verifier: string): string {
  if (!/^SCRAM-SHA-256\$\d+:[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/.test(verifier)) throw new RoleBootstrapError('a password verifier is not a SCRAM-SHA-256 verifier');
  return `'${verifier}'`;
}

/**
 * Makes (or brings back) every role of the request, in one transaction, on a connection as the master
 * user. `verifiers`: the SCRAM verifier of each role that has a password secret (role name -> verifier).
 */
export async function applyDatabaseRoles(client: ClientBase, request: RoleBootstrapRequest, verifiers: ReadonlyMap<string, string> = new Map()): Promise<void> {
  const { rows } = await client.query<{ user: string }>('SELECT current_user AS user');
  const problems = requestProblems(request, rows[0]?.user);
  if (problems.length > 0) throw new RoleBootstrapError(`role bootstrap: ${problems.join('; ')}`);
  // The master user cannot remove these attributes (nor ALTER a superuser at all): refuse such a role.
  const unsafe = await client.query<{ rolname: string }>(
    'SELECT rolname FROM pg_roles WHERE rolname = ANY($1) AND (rolsuper OR rolreplication OR rolbypassrls)',
    [request.roles.map((r) => r.name)],
  );
  if (unsafe.rowCount !== 0) {
    throw new RoleBootstrapError(`role bootstrap: ${unsafe.rows.map((r) => r.rolname).join(', ')} has SUPERUSER, REPLICATION or BYPASSRLS, which the master user cannot remove: drop or rename that role, then deploy again`);
  }
  await client.query('BEGIN');
  try {
    for (const role of request.roles) {
      // CREATE ROLE has no IF NOT EXISTS; the ALTER that follows sets the attributes either way.
      const exists = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role.name]);
      if (exists.rowCount === 0) await client.query(`CREATE ROLE ${escapeIdentifier(role.name)}`);
      for (const sql of roleStatements(role, request, verifiers.get(role.name))) await client.query(sql);
    }
    for (const sql of readAccessStatements(request)) await client.query(sql);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  }
}

// --- The Lambda entry point ------------------------------------------------------------------------

/** A CloudFormation custom resource event, as the provider framework passes it on. */
interface CustomResourceEvent {
  readonly RequestType: 'Create' | 'Update' | 'Delete';
  readonly PhysicalResourceId?: string;
  readonly ResourceProperties: { readonly ServiceToken?: string; readonly Request: RoleBootstrapRequest };
}

/** Each password-secret role's derived verifier; the secret must name the role as its username. */
async function passwordVerifiers(request: RoleBootstrapRequest): Promise<Map<string, string>> {
  const verifiers = new Map<string, string>();
  for (const role of request.roles) {
    if (role.passwordSecretArn === undefined) continue;
    const secret = await readSecretCredentials(role.passwordSecretArn);
    if (secret.username !== role.name) throw new RoleBootstrapError(`secret ${role.passwordSecretArn} is for user ${secret.username}, not role ${role.name}: give the role the secret made for it`);
    verifiers.set(role.name, derivedScramVerifier(role.name, secret.password));
  }
  return verifiers;
}

function requiredEnv(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) throw new ConfigError(name, value, 'the role bootstrap needs it');
  return value;
}

/**
 * Runs the bootstrap. TLS is verified against the RDS certificate authorities, which Node.js 20+
 * runtimes load only when NODE_EXTRA_CA_CERTS names /var/runtime/ca-cert.pem (set by the constructs).
 */
export async function handler(event: CustomResourceEvent | RoleBootstrapRequest): Promise<{ PhysicalResourceId: string; Data: { Roles: string } }> {
  const request = 'ResourceProperties' in event ? event.ResourceProperties.Request : event;
  const physicalId = `database-roles:${request.database}`;
  const roles = request.roles.map((r) => r.name).join(',');
  if ('RequestType' in event && event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId ?? physicalId, Data: { Roles: roles } };

  const host = requiredEnv(process.env, BOOTSTRAP_ENV.host);
  const master = await readSecretCredentials(requiredEnv(process.env, BOOTSTRAP_ENV.masterSecretArn));
  const verifiers = await passwordVerifiers(request);
  const client = new Client({
    host,
    port: Number(process.env[BOOTSTRAP_ENV.port] ?? 5432),
    database: request.database,
    user: master.username,
    password: master.password,
    ssl: { rejectUnauthorized: true, servername: host },
    connectionTimeoutMillis: 10000,
    application_name: 'aurora-proxy-kit-role-bootstrap',
  });
  await client.connect();
  try {
    await applyDatabaseRoles(client, request, verifiers);
  } finally {
    await client.end();
  }
  return { PhysicalResourceId: physicalId, Data: { Roles: roles } };
}
