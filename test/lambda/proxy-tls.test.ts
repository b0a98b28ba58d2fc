/**
 * TLS to RDS Proxy endpoints, with certificates shaped like RDS Proxy's: a wildcard for the proxy's
 * domain (`*.proxy-<id>.<region>.rds.amazonaws.com`), served by a real TLS server on loopback and
 * checked by the consumer's own ssl options in a real handshake. A custom endpoint's name
 * (`<name>.endpoint.proxy-<id>...`) is not covered by that wildcard, so `verify-full` fails there as it
 * does on AWS; `verify-proxy-domain` authenticates the proxy by its default endpoint's name instead.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TLSSocket, connect, type ConnectionOptions } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { Client } from 'pg';
import { loadConfig } from '../../lambda/src/config';
import { buildClientConfig } from '../../lambda/src/db';
import { ConfigError } from '../../lambda/src/errors';
import { amazonRootCertificates, sslOptions } from '../../lambda/src/tls';
import { generateTls, type TlsFiles } from '../../lib/rehearsal';

const REGION_DOMAIN = 'us-east-1.rds.amazonaws.com';
const DEFAULT_ENDPOINT = `kit.proxy-abc123def456.${REGION_DOMAIN}`;
const CUSTOM_ENDPOINT = `kit-ro.endpoint.proxy-abc123def456.${REGION_DOMAIN}`;
const OTHER_PROXY_WILDCARD = `*.proxy-0ther0proxy00.${REGION_DOMAIN}`;

/** A TLS server on 127.0.0.1 that speaks PostgreSQL's SSLRequest, then the handshake, then hangs up. */
async function startProxyLikeServer(tls: TlsFiles): Promise<{ port: number; close: () => Promise<void> }> {
  const cert = readFileSync(tls.certFile);
  const key = readFileSync(tls.keyFile);
  const server: Server = createServer((socket) => {
    socket.once('data', () => {
      socket.write('S');
      const secure = new TLSSocket(socket, { isServer: true, cert, key });
      secure.on('error', () => socket.destroy());
      secure.once('secure', () => secure.end());
    });
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** PostgreSQL's SSLRequest: length 8, code 80877103. */
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 4, 210, 22, 47]);

/**
 * A client handshake as node-postgres makes it (SSLRequest, then TLS on the same socket) to `port`,
 * asking for `serverName`; resolves with the TLS error code, or 'ok'.
 */
function handshake(port: number, serverName: string, options: ConnectionOptions): Promise<string> {
  return new Promise((resolve) => {
    const raw = createConnection({ host: '127.0.0.1', port }, () => raw.write(SSL_REQUEST));
    raw.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    raw.once('data', () => {
      const secure = connect({ ...options, socket: raw, servername: serverName }, () => {
        secure.destroy();
        resolve('ok');
      });
      secure.on('error', (err: NodeJS.ErrnoException) => {
        raw.destroy();
        resolve(err.code ?? err.message);
      });
    });
  });
}

let dir: string;
let proxyCerts: TlsFiles;
let otherProxyCerts: TlsFiles;
let proxyTls: TlsFiles;
let server: { port: number; close: () => Promise<void> };
let otherServer: { port: number; close: () => Promise<void> };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kit-proxy-tls-'));
  proxyCerts = await generateTls(join(dir, 'proxy'), [`*.proxy-abc123def456.${REGION_DOMAIN}`], undefined);
  otherProxyCerts = await generateTls(join(dir, 'other'), [OTHER_PROXY_WILDCARD], undefined);
  proxyTls = proxyCerts;
  server = await startProxyLikeServer(proxyCerts);
  otherServer = await startProxyLikeServer(otherProxyCerts);
}, 30_000);

afterAll(async () => {
  await server?.close();
  await otherServer?.close();
  rmSync(dir, { recursive: true, force: true });
});

// AWS fact proxy-tls-custom-endpoint-identity (lib/model/aws-facts.ts).
describe('certificates shaped like RDS Proxy', () => {
  test('GIVEN the wildcard certificate WHEN read THEN it names the proxy domain only, not the custom endpoint', () => {
    const cert = new X509Certificate(readFileSync(proxyTls.certFile));
    expect(cert.checkHost(DEFAULT_ENDPOINT)).toBe(`*.proxy-abc123def456.${REGION_DOMAIN}`);
    expect(cert.checkHost(CUSTOM_ENDPOINT)).toBeUndefined();
  });

  test('GIVEN verify-full WHEN a consumer reaches a custom endpoint THEN the host name is rejected, as on AWS', async () => {
    const ssl = sslOptions({ mode: 'verify-full', caFile: proxyTls.caFile }) as ConnectionOptions;
    await expect(handshake(server.port, CUSTOM_ENDPOINT, ssl)).resolves.toBe('ERR_TLS_CERT_ALTNAME_INVALID');
  });

  test('GIVEN verify-full WHEN a consumer reaches the default endpoint THEN the handshake succeeds', async () => {
    const ssl = sslOptions({ mode: 'verify-full', caFile: proxyTls.caFile }) as ConnectionOptions;
    await expect(handshake(server.port, DEFAULT_ENDPOINT, ssl)).resolves.toBe('ok');
  });

  test('GIVEN verify-proxy-domain WHEN a consumer reaches a custom endpoint of that proxy THEN the handshake succeeds', async () => {
    const ssl = sslOptions({ mode: 'verify-proxy-domain', caFile: proxyTls.caFile, serverName: DEFAULT_ENDPOINT }) as ConnectionOptions;
    await expect(handshake(server.port, CUSTOM_ENDPOINT, ssl)).resolves.toBe('ok');
  });

  test("GIVEN verify-proxy-domain WHEN the server's certificate belongs to another proxy THEN the name is rejected", async () => {
    const ssl = sslOptions({ mode: 'verify-proxy-domain', caFile: otherProxyCerts.caFile, serverName: DEFAULT_ENDPOINT }) as ConnectionOptions;
    await expect(handshake(otherServer.port, CUSTOM_ENDPOINT, ssl)).resolves.toBe('ERR_TLS_CERT_ALTNAME_INVALID');
  });

  test('GIVEN verify-proxy-domain without the local CA WHEN the chain does not end at an Amazon root THEN it is rejected', async () => {
    const ssl = sslOptions({ mode: 'verify-proxy-domain', serverName: DEFAULT_ENDPOINT }) as ConnectionOptions;
    await expect(handshake(server.port, CUSTOM_ENDPOINT, ssl)).resolves.toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT/);
  });

  test('GIVEN verify-proxy-domain WHEN node-postgres connects THEN it keeps the identity check (SSLRequest, then the handshake)', async () => {
    // GIVEN a config as the constructs write it, pointed at the loopback server
    const config = loadConfig({
      DB_HOST: CUSTOM_ENDPOINT, DB_NAME: 'app', DB_USER: 'reader', DB_AUTH: 'password', DB_PASSWORD: 'x', DB_ENDPOINT_ROLE: 'READ_ONLY',
      DB_TLS: 'verify-proxy-domain', DB_TLS_SERVER_NAME: DEFAULT_ENDPOINT, DB_TLS_CA_FILE: proxyTls.caFile,
    });
    const reach = (port: number, caFile: string) =>
      new Client({ ...buildClientConfig({ ...config, tls: { ...config.tls, caFile } }), host: '127.0.0.1', port, connectionTimeoutMillis: 3000 })
        .connect()
        .then(() => 'connected', (err: NodeJS.ErrnoException) => err.code ?? err.message);

    // WHEN / THEN: the handshake passes (the server then hangs up), and fails for another proxy's certificate
    await expect(reach(server.port, proxyTls.caFile)).resolves.toMatch(/Connection terminated|ECONNRESET/);
    await expect(reach(otherServer.port, otherProxyCerts.caFile)).resolves.toBe('ERR_TLS_CERT_ALTNAME_INVALID');
  });
});

describe('verify-proxy-domain configuration', () => {
  const base = { DB_NAME: 'app', DB_USER: 'reader', AWS_REGION: 'us-east-1', DB_ENDPOINT_ROLE: 'READ_ONLY', DB_TLS: 'verify-proxy-domain' };

  test("GIVEN Amazon's roots WHEN taken from Node's bundle THEN all five Amazon Trust Services roots are there", () => {
    const subjects = amazonRootCertificates().map((pem) => new X509Certificate(pem).subject);
    expect(subjects).toHaveLength(5);
    expect(subjects.join('\n')).toMatch(/Amazon Root CA 1[\s\S]*Amazon Root CA 4|Amazon Root CA 4[\s\S]*Amazon Root CA 1/);
  });

  test('GIVEN IAM auth and a custom endpoint of the proxy WHEN loaded THEN the mode and the server name are kept', () => {
    const config = loadConfig({ ...base, DB_HOST: CUSTOM_ENDPOINT, DB_TLS_SERVER_NAME: DEFAULT_ENDPOINT });
    expect(config.tls).toEqual({ mode: 'verify-proxy-domain', serverName: DEFAULT_ENDPOINT });
  });

  test.each<[string, string, Record<string, string>, RegExp]>([
    ['no server name', 'DB_TLS_SERVER_NAME', { DB_HOST: CUSTOM_ENDPOINT }, /required with DB_TLS=verify-proxy-domain/],
    ['a host of another proxy', 'DB_HOST', { DB_HOST: `kit-ro.endpoint.proxy-0ther0proxy00.${REGION_DOMAIN}`, DB_TLS_SERVER_NAME: DEFAULT_ENDPOINT }, /is not an endpoint of the proxy/],
    ['an IP address as host', 'DB_HOST', { DB_HOST: '10.0.0.5', DB_TLS_SERVER_NAME: DEFAULT_ENDPOINT }, /must end in \.proxy-abc123def456\./],
    ['a server name with verify-full', 'DB_TLS_SERVER_NAME', { DB_HOST: DEFAULT_ENDPOINT, DB_TLS: 'verify-full', DB_TLS_SERVER_NAME: DEFAULT_ENDPOINT }, /only used with DB_TLS=verify-proxy-domain/],
  ])('GIVEN %s WHEN loaded THEN ConfigError naming %s', (_case, variable, env, message) => {
    const load = () => loadConfig({ ...base, ...env });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(new RegExp(`^${variable}=`));
    expect(load).toThrow(message);
  });
});
