/**
 * The consumers' TLS against a proxy shaped like RDS Proxy, across namespaces like VPCs (as root;
 * skipped otherwise). A TLS server in the data namespace serves the proxy's wildcard certificate on a
 * custom endpoint's address in the consumer VPC; the consumer's own code, run inside the consumer
 * namespace, finds it by its AWS-shaped name in the namespace's hosts file. As on AWS, verify-full
 * fails on the custom endpoint (the wildcard does not name it) and verify-proxy-domain, with the
 * proxy's default endpoint as server name, gets through.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { consumerEnvironment, type TlsConfig } from '../../../lambda/src/environment';
import {
  AwsNames,
  addressOf,
  awsShapedCertificateRequests,
  consumerOf,
  issueCertificates,
  planNetwork,
  setUpNetwork,
  tearDownNetwork,
  networkLeftovers,
  type CertificateSet,
} from '../../../lib/rehearsal';
import { SUITE_BLOCKS } from '../../support/loopback-blocks';
import { liveUnavailable, runNode, startNode, tsNodeArgs, type Started } from './isolation';
import { EndpointRole } from '../../../lambda/src/environment';

const names = new AwsNames('network-tls-suite');
const DEFAULT_ENDPOINT = names.proxyDefaultEndpoint('kit');
const CUSTOM_ENDPOINT = names.proxyCustomEndpoint('kit', 'kit-ro');
const plan = planNetwork({
  addressBlock: SUITE_BLOCKS.networkTlsSuite.block,
  dataHosts: [{ key: 'proxy', hostNumber: 101, names: [DEFAULT_ENDPOINT] }],
  consumers: [{ vpc: 'app', endpoints: [{ key: 'kit-ro', names: [CUSTOM_ENDPOINT] }] }],
});
const PORT = 5432;

/**
 * PostgreSQL's side of the start of a connection: answers the SSLRequest with 'S', does the TLS
 * handshake with the given certificate, then refuses the login with an ErrorResponse that names the
 * server name the client asked for, so the client sees it got through TLS. Exits by itself after 60 s.
 */
const PROXY_LIKE_SERVER = `
const net = require('node:net');
const tls = require('node:tls');
const fs = require('node:fs');
setTimeout(() => process.exit(0), 60000).unref();
process.on('SIGTERM', () => process.exit(0));
const [certFile, keyFile, ...targets] = process.argv.slice(1);
const cert = fs.readFileSync(certFile);
const key = fs.readFileSync(keyFile);
const errorResponse = (message) => {
  const fields = Buffer.from('SFATAL\\0C28000\\0M' + message + '\\0\\0');
  const head = Buffer.alloc(5);
  head.write('E');
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
};
let listening = 0;
for (const target of targets) {
  const [host, port] = target.split(':');
  net.createServer((socket) => {
    socket.on('error', () => socket.destroy());
    socket.once('data', () => {
      socket.write('S');
      const secure = new tls.TLSSocket(socket, { isServer: true, cert, key });
      secure.on('error', () => socket.destroy());
      secure.once('data', () => secure.end(errorResponse('through TLS to ' + secure.servername)));
    });
  }).listen(Number(port), host, () => {
    if (++listening === targets.length) console.log('listening');
  });
}
setInterval(() => undefined, 1000);
`;

interface ProbeOutcome {
  readonly stage: string;
  readonly code?: string;
  readonly message?: string;
}

const live = liveUnavailable === undefined ? describe : describe.skip;

live('a proxy shaped like RDS Proxy, reached from a consumer VPC', () => {
  let dir: string;
  let certs: CertificateSet;
  let server: Started | undefined;

  /** The consumer's code, in the app namespace, connecting to `host` with `tls`. */
  const probe = (host: string, tls: TlsConfig): Promise<ProbeOutcome> => {
    const { args, env } = tsNodeArgs(join(__dirname, 'fixtures', 'consumer-tls-probe.ts'));
    const consumer = consumerEnvironment({ host, port: PORT, database: 'app', user: 'app_reader', endpointRole: EndpointRole.READ_ONLY, auth: { kind: 'password', password: 'unused' }, tls, connectTimeoutMs: 3000, logLevel: 'SILENT' });
    return runNode<ProbeOutcome>({ namespace: consumerOf(plan, 'app').namespace, args, env: { PATH: process.env.PATH ?? '', ...env, ...consumer } }, 30_000);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kit-network-tls-'));
    certs = await issueCertificates(dir, awsShapedCertificateRequests({ names, proxy: 'kit', cluster: 'kit', instances: [] }), undefined);
    await setUpNetwork(plan);
    const proxy = certs.certificates.proxy!;
    const targets = [`${addressOf(plan, 'kit-ro')}:${PORT}`, `${addressOf(plan, 'proxy')}:${PORT}`];
    server = await startNode({ namespace: plan.dataNamespace, args: ['-e', PROXY_LIKE_SERVER, proxy.certFile, proxy.keyFile, ...targets] }, /listening/);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await tearDownNetwork(plan).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  test('GIVEN verify-full WHEN the consumer connects to its custom endpoint by name THEN the host name is rejected, as on AWS', async () => {
    const outcome = await probe(CUSTOM_ENDPOINT, { mode: 'verify-full', caFile: certs.caFile });
    expect(outcome).toMatchObject({ stage: 'connect', code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
    expect(outcome.message).toContain(`Host: ${CUSTOM_ENDPOINT}. is not in the cert's altnames: DNS:${names.proxyWildcard('kit')}`);
  }, 40_000);

  test("GIVEN verify-proxy-domain with the proxy's default endpoint WHEN the consumer connects to its custom endpoint THEN it gets through TLS", async () => {
    const outcome = await probe(CUSTOM_ENDPOINT, { mode: 'verify-proxy-domain', caFile: certs.caFile, serverName: DEFAULT_ENDPOINT });
    // The server's refusal of the login, which it sends only after the handshake, for the name asked.
    expect(outcome).toEqual({ stage: 'connect', code: '28000', message: `through TLS to ${CUSTOM_ENDPOINT}` });
  }, 40_000);

  test('GIVEN verify-proxy-domain without the rehearsal CA WHEN the consumer connects THEN the chain, not ending at an Amazon root, is rejected', async () => {
    const outcome = await probe(CUSTOM_ENDPOINT, { mode: 'verify-proxy-domain', serverName: DEFAULT_ENDPOINT });
    expect(outcome.code).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT/);
  }, 40_000);

  test("GIVEN the proxy's default endpoint, in the data VPC WHEN the consumer connects to it THEN its name resolves but the network is unreachable", async () => {
    const outcome = await probe(DEFAULT_ENDPOINT, { mode: 'verify-full', caFile: certs.caFile });
    expect(outcome).toMatchObject({ stage: 'connect', code: 'ENETUNREACH' });
    expect(outcome.message).toContain(addressOf(plan, 'proxy'));
  }, 40_000);

  test('GIVEN the server stopped by pid WHEN torn down THEN nothing of the plan is left', async () => {
    await server!.stop();
    await tearDownNetwork(plan);
    expect(await networkLeftovers(plan)).toEqual([]);
  }, 30_000);
});
