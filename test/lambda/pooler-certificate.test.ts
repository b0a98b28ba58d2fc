/**
 * The pooler certificate function with real crypto: the chain checked by openssl and by Node's TLS
 * name check, for the names interface endpoints really get, and the CA kept across re-issues.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { checkServerIdentity as tlsCheckServerIdentity, type PeerCertificate } from 'node:tls';
import {
  DEFAULT_SERVER_VALIDITY_DAYS,
  PoolerCertificateError,
  certificateNames,
  certificateRequestProblems,
  createCa,
  handleEvent,
  issueServerCertificate,
  serialNumber,
  type PoolerCertificateRequest,
  type SecretStore,
} from '../../lambda/src/pooler-certificate';

const SERVICE = 'vpce-svc-0a1b2c3d4e5f60718';
const REQUEST: PoolerCertificateRequest = {
  serviceId: SERVICE,
  region: 'eu-west-1',
  dnsSuffix: 'amazonaws.com',
  tlsSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:pooler-tls-AbCdEf',
  caSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:pooler-ca-GhIjKl',
  validityDays: DEFAULT_SERVER_VALIDITY_DAYS,
};
/** The names interface endpoints of the service get: Regional, and zonal (AWS PrivateLink). */
const REGIONAL = `vpce-0fe5b17a0707d6abc-29p5708s.${SERVICE}.eu-west-1.vpce.amazonaws.com`;
const ZONAL = `vpce-0fe5b17a0707d6abc-29p5708s-eu-west-1a.${SERVICE}.eu-west-1.vpce.amazonaws.com`;
/** Another service's endpoint in the same Region: must not match. */
const OTHER_SERVICE = 'vpce-0fe5b17a0707d6abc-29p5708s.vpce-svc-0ffffffffffffffff.eu-west-1.vpce.amazonaws.com';

/** Secrets Manager as a map; values as Secrets Manager holds them (strings). */
class MapStore implements SecretStore {
  readonly values = new Map<string, string>();
  readonly puts: string[] = [];
  async get(arn: string): Promise<string | undefined> {
    return this.values.get(arn);
  }
  async put(arn: string, value: string): Promise<void> {
    this.puts.push(arn);
    this.values.set(arn, value);
  }
}

let work: string;
beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'pooler-cert-'));
});
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

function files(listener: { certificate: string; ca: string }, name: string): { cert: string; ca: string } {
  const cert = path.join(work, `${name}.crt`);
  const ca = path.join(work, `${name}-ca.crt`);
  fs.writeFileSync(cert, listener.certificate);
  fs.writeFileSync(ca, listener.ca);
  return { cert, ca };
}

function openssl(args: string[]): { ok: boolean; out: string } {
  try {
    return { ok: true, out: execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

const checkhost = (cert: string, host: string): string => openssl(['x509', '-in', cert, '-noout', '-checkhost', host]).out.trim();

async function issue(store = new MapStore(), request: PoolerCertificateRequest = REQUEST) {
  const response = await handleEvent({ RequestType: 'Create', ResourceProperties: { Request: request } }, store);
  const listener = JSON.parse(store.values.get(request.tlsSecretArn)!) as { certificate: string; privateKey: string; ca: string };
  return { response, listener, store };
}

describe('pooler certificate: serial numbers', () => {
  test('always 16 bytes whose first is 01-7f: positive, minimal in DER, shown by a certificate as generated', () => {
    // GIVEN many serials (a first byte of zero would come up about once in 128)
    const serials = Array.from({ length: 4000 }, () => serialNumber());
    // THEN each is 32 hex digits with a first byte from 01 to 7f, and they differ
    for (const serial of serials) expect(serial).toMatch(/^(0[1-9a-f]|[1-7][0-9a-f])[0-9a-f]{30}$/);
    expect(new Set(serials).size).toBe(serials.length);
  });
});

describe('pooler certificate: issued', () => {
  let listener: { certificate: string; privateKey: string; ca: string };
  let response: Awaited<ReturnType<typeof issue>>['response'];
  let store: MapStore;
  let paths: { cert: string; ca: string };

  beforeAll(async () => {
    // GIVEN empty secrets WHEN the custom resource is created
    ({ response, listener, store } = await issue());
    paths = files(listener, 'issued');
  });

  test('THEN the server certificate chains to the CA (openssl verify, with the CA\'s name constraint)', () => {
    const { ok, out } = openssl(['verify', '-x509_strict', '-purpose', 'sslserver', '-CAfile', paths.ca, paths.cert]);
    expect([ok, out.trim()]).toEqual([true, `${paths.cert}: OK`]);
  });

  test('THEN openssl matches a Regional and a zonal endpoint name, not another service\'s', () => {
    expect(checkhost(paths.cert, REGIONAL)).toBe(`Hostname ${REGIONAL} does match certificate`);
    expect(checkhost(paths.cert, ZONAL)).toBe(`Hostname ${ZONAL} does match certificate`);
    expect(checkhost(paths.cert, OTHER_SERVICE)).toBe(`Hostname ${OTHER_SERVICE} does NOT match certificate`);
    // The service's own name (no endpoint label) is not an endpoint's.
    expect(checkhost(paths.cert, `${SERVICE}.eu-west-1.vpce.amazonaws.com`)).toMatch(/does NOT match/);
  });

  test('THEN Node\'s TLS name check accepts the endpoint names and refuses another service\'s', () => {
    const peer = new X509Certificate(listener.certificate);
    const asPeer = { subject: { CN: certificateNames(REQUEST)[0] }, subjectaltname: peer.subjectAltName } as unknown as PeerCertificate;
    expect(tlsCheckServerIdentity(REGIONAL, asPeer)).toBeUndefined();
    expect(tlsCheckServerIdentity(ZONAL, asPeer)).toBeUndefined();
    expect(tlsCheckServerIdentity(OTHER_SERVICE, asPeer)).toEqual(expect.objectContaining({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' }));
  });

  test('THEN the keys are ECDSA P-256, the CA is a CA for servers only, the server certificate is not', () => {
    const ca = new X509Certificate(listener.ca);
    const server = new X509Certificate(listener.certificate);
    expect(ca.ca).toBe(true);
    expect(server.ca).toBe(false);
    expect(server.checkIssued(ca)).toBe(true);
    expect(server.verify(ca.publicKey)).toBe(true);
    expect(server.publicKey.asymmetricKeyDetails).toEqual({ namedCurve: 'prime256v1' });
    expect(ca.publicKey.asymmetricKeyDetails).toEqual({ namedCurve: 'prime256v1' });
    expect(createPrivateKey(listener.privateKey).asymmetricKeyType).toBe('ec');
    expect(server.checkPrivateKey(createPrivateKey(listener.privateKey))).toBe(true);
    const text = openssl(['x509', '-in', paths.ca, '-noout', '-text']).out;
    expect(text).toMatch(/X509v3 Name Constraints: critical\s+Permitted:\s+DNS:vpce\.amazonaws\.com/);
    expect(text).toMatch(/CA:TRUE, pathlen:0/);
    expect(openssl(['x509', '-in', paths.cert, '-noout', '-text']).out).toMatch(/TLS Web Server Authentication/);
  });

  test('THEN the response carries the CA certificate and the serial, no key', () => {
    expect(response).toEqual({ PhysicalResourceId: `pooler-certificate:${REQUEST.caSecretArn}`, Data: { CaCertificate: listener.ca, CertificateSerial: expect.stringMatching(/^[0-9a-f]{32}$/) } });
    expect(JSON.stringify(response)).not.toMatch(/PRIVATE KEY/);
    expect(new X509Certificate(listener.certificate).serialNumber.toLowerCase()).toBe((response.Data as { CertificateSerial: string }).CertificateSerial);
  });

  test('THEN the CA is stored first, in its own secret, and the hosts\' secret has no CA key', () => {
    expect(store.puts).toEqual([REQUEST.caSecretArn, REQUEST.tlsSecretArn]);
    expect(Object.keys(listener).sort()).toEqual(['ca', 'certificate', 'privateKey']);
    const ca = JSON.parse(store.values.get(REQUEST.caSecretArn)!) as { certificate: string; privateKey: string };
    expect(ca.certificate).toBe(listener.ca);
    expect(listener.privateKey).not.toBe(ca.privateKey);
  });
});

describe('pooler certificate: re-issued', () => {
  test('GIVEN an issued certificate WHEN the endpoint service is replaced (new id) THEN the CA is kept and the new names match, the old do not', async () => {
    const { store, listener: first } = await issue();
    const replaced = { ...REQUEST, serviceId: 'vpce-svc-0123456789abcdef0' };
    const response = await handleEvent({ RequestType: 'Update', PhysicalResourceId: 'x', ResourceProperties: { Request: replaced }, OldResourceProperties: { Request: REQUEST } }, store);
    const second = JSON.parse(store.values.get(REQUEST.tlsSecretArn)!) as typeof first;
    expect(second.ca).toBe(first.ca);
    expect((response.Data as { CaCertificate: string }).CaCertificate).toBe(first.ca);
    expect(second.certificate).not.toBe(first.certificate);
    const paths = files(second, 'reissued');
    expect(openssl(['verify', '-CAfile', paths.ca, paths.cert]).ok).toBe(true);
    expect(checkhost(paths.cert, `vpce-0aa-1bb.vpce-svc-0123456789abcdef0.eu-west-1.vpce.amazonaws.com`)).toMatch(/does match/);
    expect(checkhost(paths.cert, REGIONAL)).toMatch(/does NOT match/);
  });

  test('GIVEN the placeholder CloudFormation put in the CA secret WHEN issuing THEN a CA is made; GIVEN half a CA THEN it refuses rather than replace it', async () => {
    const store = new MapStore();
    store.values.set(REQUEST.caSecretArn, 'Xy7$generated-by-cloudformation');
    await expect(issue(store)).resolves.toBeDefined();
    const broken = new MapStore();
    broken.values.set(REQUEST.caSecretArn, JSON.stringify({ certificate: 'x' }));
    await expect(issue(broken)).rejects.toThrow(new PoolerCertificateError(`secret ${REQUEST.caSecretArn} holds a CA without its certificate or key: restore it, or delete its value to make a new CA (consumers then trust the new one after the deploy)`, 'InvalidCaSecret'));
    expect(broken.puts).toEqual([]);
  });

  test('GIVEN a CA that expires before the new certificate would WHEN issuing THEN a new CA replaces it', async () => {
    const store = new MapStore();
    const old = await createCa('amazonaws.com', new Date(Date.now() - 7290 * 86_400_000));
    store.values.set(REQUEST.caSecretArn, JSON.stringify(old));
    const { listener } = await issue(store);
    expect(listener.ca).not.toBe(old.certificate);
  });

  test('GIVEN the CA WHEN it signs a name outside vpce.amazonaws.com THEN verification fails on its name constraint', async () => {
    const ca = await createCa('amazonaws.com');
    const { pair } = await issueServerCertificate(ca, ['db.example.com'], 30);
    const paths = files({ certificate: pair.certificate, ca: ca.certificate }, 'outside');
    const { ok, out } = openssl(['verify', '-CAfile', paths.ca, paths.cert]);
    expect([ok, out]).toEqual([false, expect.stringMatching(/permitted subtree violation/)]);
  });

  test('GIVEN a Delete WHEN handled THEN nothing is written', async () => {
    const store = new MapStore();
    await expect(handleEvent({ RequestType: 'Delete', PhysicalResourceId: 'pooler-certificate:x', ResourceProperties: { Request: REQUEST } }, store)).resolves.toEqual({ PhysicalResourceId: 'pooler-certificate:x', Data: {} });
    expect(store.puts).toEqual([]);
  });

  test('GIVEN CloudFormation\'s string properties WHEN handled THEN the validity is read as a number', async () => {
    const { listener } = await issue(new MapStore(), { ...REQUEST, validityDays: '30' as unknown as number });
    const days = (new Date(new X509Certificate(listener.certificate).validTo).getTime() - Date.now()) / 86_400_000;
    expect(Math.round(days)).toBe(30);
  });
});

describe('pooler certificate: the request', () => {
  test.each([
    [{ serviceId: 'svc-123' }, 'serviceId "svc-123" is not a VPC endpoint service id: pass the endpoint service\'s id (vpce-svc-<hex>)'],
    [{ region: 'Europe' }, 'region "Europe" is not a Region name such as us-east-1'],
    [{ dnsSuffix: '' }, 'dnsSuffix "" is not a DNS suffix: pass the partition\'s, e.g. amazonaws.com'],
    [{ tlsSecretArn: 'pooler-tls' }, 'tlsSecretArn "pooler-tls" is not a Secrets Manager secret ARN: use arn:<partition>:secretsmanager:<region>:<account>:secret:<name>'],
    [{ caSecretArn: REQUEST.tlsSecretArn }, 'tlsSecretArn and caSecretArn are the same secret: the hosts read the first, so the CA\'s key needs a secret of its own'],
    [{ validityDays: 3651 }, 'validityDays 3651 is out of range: an integer from 1 to 3650 (half the CA\'s 20 years: a re-issue keeps the CA for 10 years at least)'],
  ])('GIVEN %j THEN it is refused with what to fix, before any secret is touched', async (change, problem) => {
    expect(certificateRequestProblems({ ...REQUEST, ...change })).toEqual([problem]);
    const store = new MapStore();
    await expect(issue(store, { ...REQUEST, ...change })).rejects.toThrow(`pooler certificate: ${problem}`);
    expect(store.puts).toEqual([]);
  });

  test('the China partition\'s names end in its suffix', () => {
    expect(certificateNames({ ...REQUEST, region: 'cn-north-1', dnsSuffix: 'amazonaws.com.cn' })).toEqual([`*.${SERVICE}.cn-north-1.vpce.amazonaws.com.cn`]);
  });
});

describe('pooler certificate: the Lambda entry point on Secrets Manager', () => {
  /** The runtime's SDK, as far as the function uses it: a secret with no value yet, then writes. */
  const sent: Array<{ command: string; input: Record<string, unknown> }> = [];
  let clientConfig: unknown;
  const values = new Map<string, string>();
  beforeAll(() => {
    class Command {
      constructor(readonly input: Record<string, unknown>) {}
    }
    jest.doMock(
      '@aws-sdk/client-secrets-manager',
      () => ({
        GetSecretValueCommand: class GetSecretValueCommand extends Command {},
        PutSecretValueCommand: class PutSecretValueCommand extends Command {},
        SecretsManagerClient: class {
          constructor(config: unknown) {
            clientConfig = config;
          }
          async send(command: Command): Promise<{ SecretString?: string }> {
            const name = command.constructor.name;
            sent.push({ command: name, input: command.input });
            const id = command.input.SecretId as string;
            if (id.includes('denied')) throw Object.assign(new Error('User is not authorized to perform: secretsmanager:PutSecretValue'), { name: 'AccessDeniedException' });
            if (name === 'PutSecretValueCommand') values.set(id, command.input.SecretString as string);
            if (name === 'GetSecretValueCommand' && !values.has(id)) throw Object.assign(new Error("Secrets Manager can't find the specified secret value for staging label: AWSCURRENT"), { name: 'ResourceNotFoundException' });
            return { SecretString: values.get(id) };
          }
        },
      }),
      { virtual: true },
    );
  });

  test('GIVEN secrets without a value WHEN invoked as aws_lambda_invocation does THEN it issues through the SDK with bounded retries', async () => {
    const { handler, SECRETS_MANAGER_MAX_ATTEMPTS } = await import('../../lambda/src/pooler-certificate');
    const response = await handler(REQUEST);
    expect(clientConfig).toEqual({ maxAttempts: SECRETS_MANAGER_MAX_ATTEMPTS });
    expect(sent.map((s) => [s.command, s.input.SecretId])).toEqual([
      ['GetSecretValueCommand', REQUEST.caSecretArn],
      ['PutSecretValueCommand', REQUEST.caSecretArn],
      ['PutSecretValueCommand', REQUEST.tlsSecretArn],
    ]);
    expect((response.Data as { CaCertificate: string }).CaCertificate).toBe(JSON.parse(values.get(REQUEST.tlsSecretArn)!).ca);
  });

  test('GIVEN Secrets Manager refuses WHEN invoked THEN a typed error names the call and the secret', async () => {
    const { handler } = await import('../../lambda/src/pooler-certificate');
    const denied = { ...REQUEST, tlsSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:denied-AbCdEf' };
    await expect(handler(denied)).rejects.toMatchObject({
      name: 'PoolerCertificateError',
      reason: 'SecretsManager',
      message: `PutSecretValue on ${denied.tlsSecretArn} failed: User is not authorized to perform: secretsmanager:PutSecretValue`,
    });
  });
});
