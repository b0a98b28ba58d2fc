/**
 * The least-privilege database roles the consumers log in as, instead of the master user: one role per
 * access level, each allowed IAM authentication (membership in `rds_iam`, which on RDS also forbids a
 * password login) and nothing else. The statements are idempotent, so the bootstrap can run on every
 * deployment: a role that exists is brought back to exactly these attributes and memberships, whatever
 * was granted to it by hand since.
 *
 * Plain SQL, run as the master user on the writer; the local tests run it against a real PostgreSQL with
 * a stand-in `rds_iam` role.
 */
import type { EndpointRole } from './environment';

/** What a consumer role may do. */
export type RoleAccess = 'read-only' | 'read-write';

export interface ConsumerRole {
  /** The database user a consumer logs in as (and its IAM `rds-db:connect` resource names). */
  readonly name: string;
  readonly access: RoleAccess;
}

/** The role RDS uses to mark users that log in with IAM tokens. */
export const RDS_IAM_ROLE = 'rds_iam';

/** The kit's consumer roles by the endpoint role their functions are wired to. */
export const DEFAULT_CONSUMER_ROLES: Readonly<Record<EndpointRole, ConsumerRole>> = {
  READ_ONLY: { name: 'app_reader', access: 'read-only' },
  READ_WRITE: { name: 'app_writer', access: 'read-write' },
};

/** PostgreSQL identifiers the bootstrap accepts: lower case, so they need no case folding rules. */
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** A typed failure: the bad setting, the value and the fix, like the consumers' ConfigError. */
export class RoleBootstrapError extends Error {
  override readonly name = 'RoleBootstrapError';
}

function identifier(what: string, value: string): string {
  if (!IDENTIFIER.test(value) || value.startsWith('pg_') || value.startsWith('rds')) {
    throw new RoleBootstrapError(`${what} ${JSON.stringify(value)} is not a role or database name the bootstrap creates: use 1 to 63 lower-case letters, digits and underscores, starting with a letter or underscore, not pg_* or rds*`);
  }
  return `"${value}"`;
}

/** A string literal for the DO blocks (identifiers are validated, so this only guards the quote). */
const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;

export interface RoleBootstrapSpec {
  /** The database the consumers use. */
  readonly database: string;
  /** @default 'public' */
  readonly schema?: string;
  /** @default the two DEFAULT_CONSUMER_ROLES */
  readonly roles?: ReadonlyArray<ConsumerRole>;
}

/**
 * The statements, in order. Read-only roles get SELECT on what exists and, through default privileges,
 * on every table a read/write role creates later (the write consumer creates its table on first use), and
 * `default_transaction_read_only` as a second lock. Read/write roles may create tables in the schema and
 * read and write every table in it.
 */
export function roleBootstrapStatements(spec: RoleBootstrapSpec): string[] {
  const database = identifier('database', spec.database);
  const schema = identifier('schema', spec.schema ?? 'public');
  const roles = spec.roles ?? Object.values(DEFAULT_CONSUMER_ROLES);
  const names = roles.map((r) => identifier('role', r.name));
  if (new Set(names).size !== names.length) throw new RoleBootstrapError(`roles ${roles.map((r) => r.name).join(',')} name a role twice: give each access level its own role`);
  const writers = roles.filter((r) => r.access === 'read-write');
  const out: string[] = [];
  // Every role exists before any grant, since a read-only role's default privileges name the writers.
  roles.forEach((role, i) => {
    const name = names[i];
    out.push(
      // CREATE ROLE has no IF NOT EXISTS; a concurrent bootstrap losing the race sees 42710, handled by the caller's retry.
      `DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = ${literal(role.name)}) THEN CREATE ROLE ${name} LOGIN; END IF; END $$`,
      `ALTER ROLE ${name} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS INHERIT CONNECTION LIMIT -1 PASSWORD NULL`,
      // Memberships granted by hand (another role's privileges, pg_write_all_data, ...) are taken back.
      `DO $$ DECLARE m record; BEGIN FOR m IN SELECT g.rolname FROM pg_auth_members a JOIN pg_roles g ON g.oid = a.roleid JOIN pg_roles u ON u.oid = a.member WHERE u.rolname = ${literal(role.name)} AND g.rolname <> ${literal(RDS_IAM_ROLE)} LOOP EXECUTE format('REVOKE %I FROM %I', m.rolname, ${literal(role.name)}); END LOOP; END $$`,
      `GRANT ${RDS_IAM_ROLE} TO ${name}`,
      `GRANT CONNECT ON DATABASE ${database} TO ${name}`,
    );
  });
  roles.forEach((role, i) => {
    const name = names[i];
    if (role.access === 'read-only') {
      out.push(
        `REVOKE CREATE ON SCHEMA ${schema} FROM ${name}`,
        `GRANT USAGE ON SCHEMA ${schema} TO ${name}`,
        `REVOKE INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON ALL TABLES IN SCHEMA ${schema} FROM ${name}`,
        `GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${name}`,
        ...writers.map((w) => `ALTER DEFAULT PRIVILEGES FOR ROLE ${identifier('role', w.name)} IN SCHEMA ${schema} GRANT SELECT ON TABLES TO ${name}`),
        `ALTER ROLE ${name} SET default_transaction_read_only = on`,
      );
    } else {
      out.push(
        `GRANT USAGE, CREATE ON SCHEMA ${schema} TO ${name}`,
        `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${name}`,
        `ALTER ROLE ${name} RESET default_transaction_read_only`,
      );
    }
  });
  return out;
}
