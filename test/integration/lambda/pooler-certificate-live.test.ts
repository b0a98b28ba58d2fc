/**
 * Live: PgBouncer 1.25.2 serving the certificate the pooler certificate function issues, on its loopback
 * block (SUITE_BLOCKS.poolerCertificateSuite), and node-postgres clients connecting as consumers do,
 * by an interface endpoint's name: verified against the kit's CA they log in; trusting another CA, or
 * naming another endpoint service, they are refused before any password is sent.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { Client } from 'pg';
import { createCa, handleEvent, type PoolerCertificateRequest, type SecretStore } from '../../../lambda/src/pooler-certificate';
import { findPgBouncer, serverOsUser } from '../../../lib/rehearsal';
import { SUITE_BLOCKS } from '../../support/loopback-blocks';
import { chownTo } from '../../../lib/rehearsal/os-user';

const SERVICE = 'vpce-svc-0a1b2c3d4e5f60718';
const REQUEST: PoolerCertificateRequest = {
  serviceId: SERVICE,
  region: 'us-east-1',
  dnsSuffix: 'amazonaws.com',
  tlsSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:pooler-tls-AbCdEf',
  caSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:pooler-ca-GhIjKl',
  validityDays: 30,
};
const ZONAL = `vpce-0fe5b17a0707d6abc-29p5708s-us-east-1a.${SERVICE}.us-east-1.vpce.amazonaws.com`;
const REGIONAL = `vpce-0fe5b17a0707d6abc-29p5708s.${SERVICE}.us-east-1.vpce.amazonaws.com`;
const HOST = `${SUITE_BLOCKS.poolerCertificateSuite.block}.2`;
const PORT = 6432;
const ADMIN = { user: 'kit_admin', password: 'an-admin-password-for-the-test' };

let work: string;
let pgbouncer: ChildProcess | undefined;
let exited: Promise<void>;
let log = '';
let listener: { certificate: string; privateKey: string; ca: string };
let serial: string;

function listening(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: HOST, port: PORT }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

beforeAll(async () => {
  // GIVEN the function's certificate, issued into a secret
  const values = new Map<string, string>();
  const store: SecretStore = { get: async (arn) => values.get(arn), put: async (arn, value) => void values.set(arn, value) };
  const response = await handleEvent({ RequestType: 'Create', ResourceProperties: { Request: REQUEST } }, store);
  serial = (response.Data as { CertificateSerial: string }).CertificateSerial;
  listener = JSON.parse(values.get(REQUEST.tlsSecretArn)!) as typeof listener;

  // AND PgBouncer with client TLS required, its files written as the host agent writes them (0600, the server user's)
  work = mkdtempSync(join(tmpdir(), 'pooler-cert-live-'));
  chmodSync(work, 0o755);
  const user = serverOsUser();
  const file = (name: string, text: string): string => {
    const path = join(work, name);
    writeFileSync(path, text, { mode: 0o600 });
    chownTo(user, path);
    return path;
  };
  const program = join(work, 'pgbouncer');
  copyFileSync(findPgBouncer(), program);
  chmodSync(program, 0o755);
  const ini = file(
    'pgbouncer.ini',
    [
      '[databases]',
      '[pgbouncer]',
      `listen_addr = ${HOST}`,
      `listen_port = ${PORT}`,
      'unix_socket_dir =',
      'auth_type = scram-sha-256',
      `auth_file = ${file('userlist.txt', `"${ADMIN.user}" "${ADMIN.password}"\n`)}`,
      `admin_users = ${ADMIN.user}`,
      'client_tls_sslmode = require',
      `client_tls_cert_file = ${file('server.crt', listener.certificate)}`,
      `client_tls_key_file = ${file('server.key', listener.privateKey)}`,
      `client_tls_ca_file = ${file('ca.crt', listener.ca)}`,
      '',
    ].join('\n'),
  );
  pgbouncer = spawn(program, [ini], { stdio: ['ignore', 'pipe', 'pipe'], ...(user === undefined ? {} : { uid: user.uid, gid: user.gid }) });
  pgbouncer.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  pgbouncer.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  exited = new Promise((resolve) => pgbouncer!.once('exit', () => resolve()));
  for (let i = 0; i < 100 && !(await listening()); i++) {
    if (pgbouncer.exitCode !== null) throw new Error(`pgbouncer exited: ${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!(await listening())) throw new Error(`pgbouncer not listening on ${HOST}:${PORT}: ${log}`);
}, 30_000);

afterAll(async () => {
  if (pgbouncer?.pid !== undefined && pgbouncer.exitCode === null) {
    process.kill(pgbouncer.pid, 'SIGTERM');
    await exited;
  }
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

/** Connects as a consumer does, by an endpoint's name (the address is the loopback's), and asks the admin console for its version. */
async function connect(ssl: { ca: string; servername: string } | false): Promise<{ version: string; serial: string }> {
  const client = new Client({ host: HOST, port: PORT, database: 'pgbouncer', ...ADMIN, connectionTimeoutMillis: 5000, ssl: ssl === false ? false : { ...ssl, rejectUnauthorized: true } });
  try {
    await client.connect();
    const { rows } = await client.query<{ version: string }>('SHOW VERSION');
    const socket = (client as unknown as { connection: { stream: TLSSocket } }).connection.stream;
    return { version: rows[0]!.version, serial: socket.getPeerCertificate().serialNumber.toLowerCase() };
  } finally {
    await client.end().catch(() => undefined);
  }
}

test('GIVEN the kit\'s CA WHEN a client connects by a zonal or the Regional endpoint name with verify-full THEN it logs in over TLS to the issued certificate', async () => {
  for (const servername of [ZONAL, REGIONAL]) {
    await expect(connect({ ca: listener.ca, servername })).resolves.toEqual({ version: expect.stringMatching(/^PgBouncer \d+\.\d+\.\d+$/), serial });
  }
});

test('GIVEN another CA WHEN a client connects THEN the certificate is refused', async () => {
  const other = await createCa('amazonaws.com');
  // PgBouncer sends the kit's CA along (OpenSSL completes the chain from client_tls_ca_file): a root the client does not trust.
  await expect(connect({ ca: other.certificate, servername: ZONAL })).rejects.toMatchObject({ code: 'SELF_SIGNED_CERT_IN_CHAIN' });
});

test('GIVEN the kit\'s CA WHEN a client names another endpoint service THEN the name check refuses it', async () => {
  const otherService = `vpce-0fe5b17a0707d6abc-29p5708s.vpce-svc-0ffffffffffffffff.us-east-1.vpce.amazonaws.com`;
  await expect(connect({ ca: listener.ca, servername: otherService })).rejects.toMatchObject({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
});

test('GIVEN client TLS required WHEN a client connects without TLS THEN PgBouncer refuses it', async () => {
  await expect(connect(false)).rejects.toThrow(/SSL required/);
});
