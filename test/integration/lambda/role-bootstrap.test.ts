/**
 * The role bootstrap's SQL against a REAL PostgreSQL 15, run as a stand-in for RDS's master user: not
 * a superuser, but CREATEROLE and CREATEDB, owner of the application database, and able to grant the
 * `rds_iam` role (which RDS provides and a bare PostgreSQL lacks, so the suite creates one).
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { applyDatabaseRoles, requestProblems, RoleBootstrapError, roleStatements, type RoleBootstrapRequest } from '../../../lambda/src/role-bootstrap';
import { derivedScramVerifier } from '../../../lambda/src/scram-salt';
import { LocalPostgres } from '../support/local-postgres';
import { EndpointRole } from '../../../lambda/src/environment';

const DATABASE = 'app';
const MASTER = 'master_stand_in';
const REQUEST: RoleBootstrapRequest = {
  database: DATABASE,
  roles: [
    { name: 'app_reader', access: EndpointRole.READ_ONLY },
    { name: 'app_writer', access: EndpointRole.READ_WRITE },
  ],
};

let server: LocalPostgres;
const masterPassword = randomBytes(12).toString('hex');

beforeAll(async () => {
  server = await LocalPostgres.start();
  await server.query('CREATE ROLE rds_iam NOLOGIN');
  await server.query(`CREATE ROLE ${MASTER} LOGIN CREATEROLE CREATEDB PASSWORD '${masterPassword}'`);
  await server.query(`GRANT rds_iam TO ${MASTER} WITH ADMIN OPTION`);
  await server.query(`CREATE DATABASE ${DATABASE} OWNER ${MASTER}`);
}, 60000);

afterAll(async () => {
  await server?.stop();
}, 30000);

/** A connection to the application database; a role the bootstrap made logs in with a test password (standing in for its IAM token). */
async function connect(user: string, password: string): Promise<Client> {
  const client = new Client({ host: server.host, port: server.port, database: DATABASE, user, password });
  await client.connect();
  return client;
}

async function asUser<T>(user: string, work: (client: Client) => Promise<T>): Promise<T> {
  const password = user === MASTER ? masterPassword : randomBytes(12).toString('hex');
  if (user !== MASTER) await server.query(`ALTER ROLE ${user} PASSWORD '${password}'`);
  const client = await connect(user, password);
  try {
    return await work(client);
  } finally {
    await client.end();
    if (user !== MASTER) await server.query(`ALTER ROLE ${user} PASSWORD NULL`);
  }
}

const bootstrap = (request: RoleBootstrapRequest = REQUEST) => asUser(MASTER, (c) => applyDatabaseRoles(c, request));

async function roleAttributes(name: string) {
  const [row] = await server.query(
    `SELECT r.rolcanlogin, r.rolsuper, r.rolcreatedb, r.rolcreaterole, r.rolconnlimit, a.rolpassword IS NULL AS no_password,
       pg_has_role(r.rolname, 'rds_iam', 'MEMBER') AS iam, r.rolconfig
     FROM pg_roles r JOIN pg_authid a ON a.oid = r.oid WHERE r.rolname = $1`,
    [name],
  );
  return row;
}

async function sqlStateOfQuery(client: Client, sql: string): Promise<string | undefined> {
  try {
    await client.query(sql);
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code;
  }
}

describe('a role that already exists with other attributes', () => {
  test('GIVEN app_reader exists without login, with CREATEDB, a password and a connection limit WHEN bootstrapping THEN it gets the least-privilege attributes, IAM login only (rds-iam-role-iam-only-login)', async () => {
    // GIVEN
    await server.query("CREATE ROLE app_reader NOLOGIN CREATEDB CONNECTION LIMIT 1 PASSWORD 'old-secret'");

    // WHEN
    await bootstrap();

    // THEN
    for (const name of ['app_reader', 'app_writer']) {
      expect(await roleAttributes(name)).toMatchObject({
        rolcanlogin: true, rolsuper: false, rolcreatedb: false, rolcreaterole: false, rolconnlimit: -1, no_password: true, iam: true,
      });
    }
    expect((await roleAttributes('app_reader')).rolconfig).toEqual(['default_transaction_read_only=on']);
    expect((await roleAttributes('app_writer')).rolconfig).toBeNull();
  });
});

describe('privileges', () => {
  test('GIVEN the roles WHEN the writer creates its table and writes THEN it succeeds', async () => {
    await asUser('app_writer', async (c) => {
      await c.query('CREATE TABLE IF NOT EXISTS kit_events (id bigint PRIMARY KEY, payload jsonb NOT NULL)');
      const { rowCount } = await c.query(`INSERT INTO kit_events VALUES (1, '{}') ON CONFLICT (id) DO NOTHING`);
      expect(rowCount).toBe(1);
    });
  });

  test('GIVEN a table the writer created WHEN the reader selects from it THEN it reads the row', async () => {
    const rows = await asUser('app_reader', async (c) => (await c.query('SELECT id FROM kit_events')).rows);
    expect(rows).toEqual([{ id: '1' }]);
  });

  test('GIVEN the reader WHEN it writes or creates THEN PostgreSQL refuses (25006 read-only transaction, or 42501 no privilege)', async () => {
    await asUser('app_reader', async (c) => {
      expect(['25006', '42501']).toContain(await sqlStateOfQuery(c, `INSERT INTO kit_events VALUES (2, '{}')`));
      expect(['25006', '42501']).toContain(await sqlStateOfQuery(c, 'CREATE TABLE reader_table (id int)'));
      // Even after leaving the read-only default, the role has no write privilege.
      await c.query('SET default_transaction_read_only = off');
      expect(await sqlStateOfQuery(c, `INSERT INTO kit_events VALUES (2, '{}')`)).toBe('42501');
      expect(await sqlStateOfQuery(c, 'CREATE TABLE reader_table (id int)')).toBe('42501');
    });
  });

  test('GIVEN a table the master user creates after the bootstrap WHEN each role uses it THEN the reader reads, the writer writes', async () => {
    await asUser(MASTER, (c) => c.query('CREATE TABLE master_table (id int)'));
    await asUser('app_writer', (c) => c.query('INSERT INTO master_table VALUES (1)'));
    expect(await asUser('app_reader', async (c) => (await c.query('SELECT id FROM master_table')).rows)).toEqual([{ id: 1 }]);
  });
});

describe('re-runs', () => {
  test('GIVEN the roles exist WHEN bootstrapping twice more THEN nothing fails and the attributes and data stay', async () => {
    await bootstrap();
    await bootstrap();
    expect(await roleAttributes('app_reader')).toMatchObject({ rolcanlogin: true, iam: true, rolconfig: ['default_transaction_read_only=on'] });
    expect(await asUser('app_reader', async (c) => (await c.query('SELECT id FROM kit_events')).rows)).toEqual([{ id: '1' }]);
  });

  test('GIVEN a role made a superuser by someone else WHEN bootstrapping THEN it fails naming the role and changes nothing', async () => {
    await server.query('CREATE ROLE app_admin SUPERUSER');
    const request: RoleBootstrapRequest = { database: DATABASE, roles: [{ name: 'app_admin', access: EndpointRole.READ_ONLY }] };
    await expect(bootstrap(request)).rejects.toThrow(/app_admin has SUPERUSER, REPLICATION or BYPASSRLS/);
  });
});

describe('a role that logs in with a password secret (the PgBouncer engine)', () => {
  const secretArn = 'arn:aws:secretsmanager:us-east-1:111122223333:secret:fleet-consumer-AbCdEf';
  const password = 'secret-password-of-the-consumer-0123';

  test('GIVEN an IAM-only role WHEN bootstrapped with its secret\'s verifier THEN it logs in with the secret\'s password by SCRAM and is no longer IAM-only', async () => {
    await bootstrap();
    expect((await roleAttributes('app_reader')).iam).toBe(true);
    const request: RoleBootstrapRequest = { ...REQUEST, roles: [{ name: 'app_reader', access: EndpointRole.READ_ONLY, passwordSecretArn: secretArn }, REQUEST.roles[1]!] };
    const verifier = derivedScramVerifier('app_reader', password);
    await asUser(MASTER, (c) => applyDatabaseRoles(c, request, new Map([['app_reader', verifier]])));
    expect(await roleAttributes('app_reader')).toMatchObject({ iam: false, no_password: false });
    const [stored] = await server.query("SELECT rolpassword FROM pg_authid WHERE rolname = 'app_reader'");
    expect(stored.rolpassword).toBe(verifier);
    const client = await connect('app_reader', password);
    try {
      expect((await client.query('SELECT current_user AS u')).rows[0].u).toBe('app_reader');
    } finally {
      await client.end();
    }
    // Back to IAM only, as the RDS Proxy engine asks.
    await bootstrap();
    expect(await roleAttributes('app_reader')).toMatchObject({ iam: true, no_password: true });
  });

  test('GIVEN a password secret without its verifier, or a verifier that is not SCRAM WHEN the statements are made THEN it is refused', () => {
    const role = { name: 'app_reader', access: EndpointRole.READ_ONLY, passwordSecretArn: secretArn };
    expect(() => roleStatements(role, REQUEST)).toThrow(/role app_reader: a password secret and its verifier go together/);
    expect(() => roleStatements(role, REQUEST, "x'; DROP ROLE app_writer; --")).toThrow(/not a SCRAM-SHA-256 verifier/);
  });

  test('GIVEN a password secret that is not a Secrets Manager ARN WHEN checked THEN the problem names the role, the value and the form', () => {
    expect(requestProblems({ ...REQUEST, roles: [{ name: 'app_reader', access: EndpointRole.READ_ONLY, passwordSecretArn: 'fleet-consumer' }] })).toEqual([
      'role app_reader passwordSecretArn "fleet-consumer" is not a Secrets Manager secret ARN: use arn:<partition>:secretsmanager:<region>:<account>:secret:<name>',
    ]);
  });
});

describe('requests', () => {
  test.each([
    [{ database: DATABASE, roles: [{ name: 'App-Reader', access: 'READ_ONLY' }] }, 'role name "App-Reader" must match'],
    [{ database: DATABASE, roles: [{ name: 'rds_reader', access: 'READ_ONLY' }] }, 'role name rds_reader starts with pg_ or rds'],
    [{ database: DATABASE, roles: [{ name: 'app_reader', access: 'ADMIN' }] }, 'role app_reader access "ADMIN" must be one of READ_ONLY, READ_WRITE'],
    [{ database: DATABASE, roles: [] }, 'roles is empty'],
  ])('GIVEN %j WHEN checked THEN it is refused', (request, message) => {
    expect(requestProblems(request as RoleBootstrapRequest).join('; ')).toContain(message);
  });

  test('GIVEN the master user as a consumer role WHEN bootstrapping THEN it is refused before any statement', async () => {
    const request: RoleBootstrapRequest = { database: DATABASE, roles: [{ name: MASTER, access: EndpointRole.READ_WRITE }] };
    await expect(bootstrap(request)).rejects.toThrow(RoleBootstrapError);
    await expect(bootstrap(request)).rejects.toThrow(`role name ${MASTER} is the master user`);
  });
});
