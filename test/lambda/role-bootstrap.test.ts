/**
 * The consumer roles' bootstrap SQL against a REAL PostgreSQL 15: fresh, re-run, and over a role that
 * already exists with other attributes. PostgreSQL has no `rds_iam`; the test creates a stand-in role
 * of that name, and logs the roles in with a password in place of an IAM token.
 */
import { Client, type ClientConfig } from 'pg';
import { RDS_IAM_ROLE, RoleBootstrapError, roleBootstrapStatements } from '../../lambda/src/role-bootstrap';
import { CREATE_TABLE_SQL, INSERT_EVENT_SQL, TABLE_NAME } from '../../lambda/src/schema';
import { LocalPostgres } from '../support/local-postgres';

let server: LocalPostgres;

async function run(config: ClientConfig, statements: ReadonlyArray<string>): Promise<void> {
  const client = new Client(config);
  await client.connect();
  try {
    for (const sql of statements) await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Logs in as `role` (a password standing in for the IAM token) and runs `sql`; resolves with the SQLSTATE, or 'ok'. */
async function as(role: string, sql: string, params: unknown[] = []): Promise<string> {
  await server.query(`ALTER ROLE "${role}" PASSWORD 'stand-in-for-an-iam-token'`);
  const client = new Client({ ...server.connectionConfig('kit'), user: role, password: 'stand-in-for-an-iam-token' });
  await client.connect();
  try {
    await client.query(sql, params);
    return 'ok';
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  } finally {
    await client.end();
  }
}

const bootstrap = () => run(server.connectionConfig('kit'), roleBootstrapStatements({ database: 'kit' }));

interface RoleRow {
  rolname: string;
  rolsuper: boolean;
  rolcreatedb: boolean;
  rolcreaterole: boolean;
  rolcanlogin: boolean;
  has_password: boolean;
  member_of: string[];
  settings: string[] | null;
}

async function roles(): Promise<RoleRow[]> {
  const rows = await server.query<RoleRow>(
    `SELECT r.rolname, r.rolsuper, r.rolcreatedb, r.rolcreaterole, r.rolcanlogin, a.rolpassword IS NOT NULL AS has_password,
            ARRAY(SELECT g.rolname FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid WHERE m.member = r.oid ORDER BY 1)::text[] AS member_of,
            (SELECT setconfig FROM pg_db_role_setting s WHERE s.setrole = r.oid AND s.setdatabase = 0) AS settings
       FROM pg_roles r JOIN pg_authid a ON a.oid = r.oid WHERE r.rolname IN ('app_reader', 'app_writer') ORDER BY 1`,
  );
  return rows;
}

beforeAll(async () => {
  server = await LocalPostgres.start();
  await server.query(`CREATE ROLE ${RDS_IAM_ROLE} NOLOGIN`);
  await server.query('CREATE DATABASE kit');
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

describe('consumer role bootstrap', () => {
  test('GIVEN an empty database WHEN bootstrapped THEN two IAM-only login roles exist with nothing else', async () => {
    await bootstrap();
    const expected = (rolname: string, settings: string[] | null) => ({
      rolname, rolsuper: false, rolcreatedb: false, rolcreaterole: false, rolcanlogin: true, has_password: false, member_of: [RDS_IAM_ROLE], settings,
    });
    expect(await roles()).toEqual([expected('app_reader', ['default_transaction_read_only=on']), expected('app_writer', null)]);
  });

  test('GIVEN the roles WHEN the writer creates its table and writes THEN the reader reads it and cannot write', async () => {
    await expect(as('app_writer', CREATE_TABLE_SQL)).resolves.toBe('ok');
    await expect(as('app_writer', INSERT_EVENT_SQL, [1, '{"a":1}'])).resolves.toBe('ok');
    await expect(as('app_reader', `SELECT payload FROM ${TABLE_NAME} WHERE id = 1`)).resolves.toBe('ok');
    // The role's own setting refuses the write first (25006), as a replica would...
    await expect(as('app_reader', INSERT_EVENT_SQL, [2, '{}'])).resolves.toBe('25006');
    // ...and without it, the missing privilege does (42501): two locks, either one enough.
    await expect(as('app_reader', `BEGIN READ WRITE; INSERT INTO ${TABLE_NAME} (id, payload) VALUES (3, '{}')`)).resolves.toBe('42501');
    await expect(as('app_reader', `CREATE TABLE reader_table (id int)`)).resolves.toBe('25006');
  });

  test('GIVEN a bootstrapped database WHEN bootstrapped twice more THEN it succeeds and nothing changes', async () => {
    await bootstrap();
    const before = await roles();
    await bootstrap();
    await bootstrap();
    expect(await roles()).toEqual(before);
    await expect(as('app_reader', `SELECT count(*) FROM ${TABLE_NAME}`)).resolves.toBe('ok');
  });

  test('GIVEN a reader role someone widened by hand WHEN bootstrapped THEN it is brought back to read-only', async () => {
    await server.query('ALTER ROLE app_reader CREATEDB PASSWORD \'hand-set\'');
    await server.query('GRANT pg_write_all_data TO app_reader');
    await server.query('GRANT app_writer TO app_reader');
    await run(server.connectionConfig('kit'), [`GRANT INSERT ON ${TABLE_NAME} TO app_reader`]);

    await bootstrap();

    const reader = (await roles()).find((r) => r.rolname === 'app_reader')!;
    expect(reader).toMatchObject({ rolcreatedb: false, has_password: false, member_of: [RDS_IAM_ROLE] });
    await expect(as('app_reader', `BEGIN READ WRITE; INSERT INTO ${TABLE_NAME} (id, payload) VALUES (4, '{}')`)).resolves.toBe('42501');
  });

  test.each([
    ['an upper-case role', { database: 'kit', roles: [{ name: 'AppReader', access: 'read-only' as const }] }, /role "AppReader" is not a role or database name/],
    ['a quote in the database name', { database: 'kit"; DROP DATABASE kit; --' }, /database .* is not a role or database name/],
    ['an RDS-reserved role', { database: 'kit', roles: [{ name: 'rds_superuser', access: 'read-write' as const }] }, /not pg_\* or rds\*/],
    ['one role twice', { database: 'kit', roles: [{ name: 'app', access: 'read-only' as const }, { name: 'app', access: 'read-write' as const }] }, /name a role twice/],
  ])('GIVEN %s WHEN the statements are built THEN RoleBootstrapError', (_case, spec, message) => {
    expect(() => roleBootstrapStatements(spec)).toThrow(RoleBootstrapError);
    expect(() => roleBootstrapStatements(spec)).toThrow(message);
  });
});
