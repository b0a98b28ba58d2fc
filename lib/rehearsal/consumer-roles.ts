/**
 * The database roles of a rehearsal of a deployment: those its role bootstrap makes (none without one),
 * made by the same code the deployed role bootstrap runs (lambda/src/role-bootstrap.ts: applyDatabaseRoles, on the writer, as the master user),
 * so its SQL is rehearsed too. What differs is the local stand-in for IAM: after the bootstrap leaves a
 * role without a password (IAM tokens only, `rds_iam`), the rehearsal gives it a SCRAM verifier, which
 * the writer and PgBouncer's auth file share, and the consumers log in with the password.
 */
import { Client } from 'pg';
import { applyDatabaseRoles, RDS_IAM_ROLE, type RoleBootstrapRequest } from '../../lambda/src/role-bootstrap';
import type { RehearsedDeployment } from './deployment';
import { newPassword, scramSha256Verifier } from './scram';
import { clientConfig, sqlLiteral, type Target } from './sql';

/** A consumer's login in the rehearsal: the deployment's user, a password standing in for its IAM token. */
export interface ConsumerLogin {
  readonly name: string;
  readonly password: string;
  /** SCRAM-SHA-256 verifier of password, stored by the writer and PgBouncer's auth file. */
  readonly verifier: string;
}

/** The request of the deployment's role bootstrap: its roles, none when the deployment has no bootstrap. */
export function roleBootstrapRequest(deployment: RehearsedDeployment): RoleBootstrapRequest {
  return { database: deployment.database, roles: deployment.databaseRoles.map((r) => ({ name: r.name, access: r.access })) };
}

/** A login for each consumer's user and each role made: a consumer whose role is not made still tries its login. */
export function newConsumerLogins(deployment: RehearsedDeployment): ConsumerLogin[] {
  const names = new Set([...deployment.consumers.map((c) => c.user), ...deployment.databaseRoles.map((r) => r.name)]);
  return [...names].map((name) => {
    const password = newPassword();
    return { name, password, verifier: scramSha256Verifier(password) };
  });
}

/** RDS's `rds_iam` role, which a bare PostgreSQL lacks and the role bootstrap grants or revokes: a plain role. */
export async function ensureRdsIamRole(client: Client): Promise<void> {
  await client.query(`DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = ${sqlLiteral(RDS_IAM_ROLE)}) THEN CREATE ROLE ${RDS_IAM_ROLE} NOLOGIN; END IF; END $$`);
}

/**
 * Runs the role bootstrap on the writer's application database as the admin (the master user's
 * stand-in), with RDS's `rds_iam` role made first as a plain role, then gives each login its verifier.
 */
export async function applyConsumerRoles(admin: Target, deployment: RehearsedDeployment, logins: ReadonlyArray<ConsumerLogin>): Promise<void> {
  const request = roleBootstrapRequest(deployment);
  // No role bootstrap, nothing made: the consumers' logins fail as they would on AWS.
  if (request.roles.length === 0) return;
  const made = new Set(request.roles.map((r) => r.name));
  const client = new Client(clientConfig({ ...admin, database: deployment.database }, 10_000));
  client.on('error', () => undefined);
  await client.connect();
  try {
    await ensureRdsIamRole(client);
    await applyDatabaseRoles(client, request);
    for (const login of logins.filter((l) => made.has(l.name))) await client.query(`ALTER ROLE ${client.escapeIdentifier(login.name)} PASSWORD ${sqlLiteral(login.verifier)}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
