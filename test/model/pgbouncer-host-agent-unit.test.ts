/**
 * The host agent and its AWS calls (host/apk_host.py, host/apk_aws.py, the files the hosts run) as Python functions, with
 * its admin console and servers replaced: its Signature Version 4, which signs every AWS call a pooler
 * host makes (Secrets Manager, S3, CloudWatch PutMetricData), checked against the AWS SDK's own signer
 * (@smithy/signature-v4, which @aws-sdk/rds-signer brings) on the same request and time; the health
 * verdicts and the exporter's combining, in the cases the live suite (pgbouncer-host-agent.test.ts)
 * does not reach: a process not answering, a restarted process's counters, an unreachable server.
 */
import { spawnSync } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignatureV4 } from '@smithy/signature-v4';
import { substitutePlaceholders } from '../../lib/model/pgbouncer-bootstrap';
import { FLEET_PATHS, type PoolerFleetSpec } from '../../lib/model/pgbouncer-fleet';
import { fleetProcessName, planFleetProcesses, renderFleetRouteIni } from '../../lib/model/pgbouncer-fleet-files';
import { EndpointRole } from '../../lib/model';
import { hostFilesDir } from '../../lib/model/pgbouncer-host-files';
import { renderHostKitJson } from '../../lib/model/pgbouncer-host-kit';
import { POOLER_METRICS, POOLER_METRICS_NAMESPACE } from '../../lib/model/pgbouncer-metrics';

const bytes = (data: string | ArrayBuffer | ArrayBufferView): string | Uint8Array =>
  typeof data === 'string' ? data : data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);

/** SHA-256 (HMAC when given a key) in the SDK's Checksum shape, from Node's crypto. */
class Sha256 {
  private readonly hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(bytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.hash.digest());
  }
  reset(): void {}
}

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'session-token-example' };

/**
 * Runs `body` (Python, the agent imported as `a`, its AWS calls as `w`, `inp` the input) and returns what it prints
 * as JSON. The agent reads the kit's constants from kit.json in its configuration folder (ETC): the model's, in a
 * folder of the test's.
 */
function python<T>(body: string, input: unknown = null, env: Record<string, string> = {}): T {
  const dir = mkdtempSync(join(tmpdir(), 'apk-host-'));
  try {
    writeFileSync(join(dir, 'kit.json'), renderHostKitJson());
    const script = `import json, sys\nsys.path.insert(0, ${JSON.stringify(hostFilesDir())})\nimport apk_host as a\nimport apk_aws as w\na.ETC = ${JSON.stringify(dir)}\ninp = json.loads(sys.stdin.read())\n${body}\n`;
    const run = spawnSync('python3', ['-c', script], { input: JSON.stringify(input), encoding: 'utf8', env: { PATH: process.env.PATH ?? '', PYTHONDONTWRITEBYTECODE: '1', ...env } });
    if (run.status !== 0) throw new Error(run.stderr);
    return JSON.parse(run.stdout) as T;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The agent's sign() on one request: the headers it sends. */
function agentSigned(request: { method: string; host: string; path: string; headers: Record<string, string>; body: string; service: string }): Record<string, string> {
  return python(`r = inp\nprint(json.dumps(w.sign(r["method"], r["host"], r["path"], "", r["headers"], r["body"].encode(), r["service"], "eu-west-1", ${JSON.stringify(credentials.accessKeyId)}, ${JSON.stringify(credentials.secretAccessKey)}, ${JSON.stringify(credentials.sessionToken)})))`, request);
}

describe('the host agent\'s Signature Version 4', () => {
  test.each([
    ['CloudWatch PutMetricData (Query protocol)', { method: 'POST', host: 'monitoring.eu-west-1.amazonaws.com', path: '/', service: 'monitoring', headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8' }, body: 'Action=PutMetricData&Version=2010-08-01&Namespace=AuroraProxyKit%2FPgBouncer&MetricData.member.1.MetricName=ClientConnections&MetricData.member.1.Value=4.0' }],
    ['Secrets Manager GetSecretValue (JSON protocol)', { method: 'POST', host: 'secretsmanager.eu-west-1.amazonaws.com', path: '/', service: 'secretsmanager', headers: { 'X-Amz-Target': 'secretsmanager.GetSecretValue', 'Content-Type': 'application/x-amz-json-1.1' }, body: '{"SecretId": "arn:aws:secretsmanager:eu-west-1:111122223333:secret:pooler-tls"}' }],
  ])('GIVEN %s WHEN the agent signs it THEN its Authorization is the AWS SDK signer\'s for the same request and time', async (_label, request) => {
    // WHEN
    const signed = agentSigned(request);
    const at = signed['x-amz-date']!;
    const signingDate = new Date(`${at.slice(0, 4)}-${at.slice(4, 6)}-${at.slice(6, 8)}T${at.slice(9, 11)}:${at.slice(11, 13)}:${at.slice(13, 15)}Z`);
    const sdk = new SignatureV4({ credentials, region: 'eu-west-1', service: request.service, sha256: Sha256, uriEscapePath: true });
    const reference = await sdk.sign(
      { method: request.method, protocol: 'https:', hostname: request.host, path: request.path, query: {}, body: request.body, headers: { ...request.headers, host: request.host, 'x-amz-content-sha256': signed['x-amz-content-sha256']! } },
      { signingDate },
    );
    // THEN
    expect(signed.Authorization).toBe(reference.headers.authorization);
    expect(signed['x-amz-security-token']).toBe(credentials.sessionToken);
  });
});

describe('the host agent\'s AWS endpoints', () => {
  // IMDS answers as an instance of the partition does; urlopen records the request it would send.
  const CALL = `
meta = {"/api/token": "token", "/meta-data/iam/security-credentials/": "host-role",
        "/meta-data/iam/security-credentials/host-role": json.dumps({"AccessKeyId": "AKID", "SecretAccessKey": "secret", "Token": "session"}),
        "/meta-data/placement/region": inp["region"], "/meta-data/services/domain": inp["domain"]}
w.imds = lambda path, token=None, method="GET": meta[path]
sent = []
class Response:
    def __init__(self, body): self.body = body
    def __enter__(self): return self
    def __exit__(self, *exc): return False
    def read(self): return self.body
def urlopen(request, timeout):
    sent.append({"url": request.full_url, "host": request.get_header("Host"), "auth": request.get_header("Authorization")})
    return Response(json.dumps({"SecretString": "{}"}).encode() if "secretsmanager" in request.full_url else b"data")
a.urllib.request.urlopen = urlopen
a.secret("arn:aws:secretsmanager:x:1:secret:s")
a.s3_get("kit-packages", "pooler/debian 13.tar", "/dev/null")
print(json.dumps(sent))
`;

  test.each([
    ['aws', 'eu-west-1', 'amazonaws.com'],
    ['aws-cn', 'cn-north-1', 'amazonaws.com.cn'],
  ])('GIVEN an instance of the %s partition WHEN the agent calls Secrets Manager and S3 THEN it uses the Region\'s DNS suffix from the instance metadata, and signs for that Region', (_partition, region, domain) => {
    // WHEN
    const sent = python<Array<{ url: string; host: string; auth: string }>>(CALL, { region, domain });
    // THEN
    expect(sent.map((r) => r.url)).toEqual([`https://secretsmanager.${region}.${domain}/`, `https://kit-packages.s3.${region}.${domain}/pooler/debian%2013.tar`]);
    expect(sent.map((r) => r.host)).toEqual([`secretsmanager.${region}.${domain}`, `kit-packages.s3.${region}.${domain}`]);
    for (const r of sent) expect(r.auth).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=AKID/\\d{8}/${region}/(secretsmanager|s3)/aws4_request, `));
  });
  test('GIVEN the AWS SDKs\' endpoint settings (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_S3) and credentials in the environment WHEN the agent calls Secrets Manager and S3 THEN each goes to its endpoint (S3 path-style), signed for the environment\'s Region, and IMDS is not asked', () => {
    // WHEN
    const sent = python<Array<{ url: string; host: string; auth: string }>>(
      // IMDS unanswerable; the stub answers Secrets Manager by its target header (the URL no longer names it).
      CALL.replace('w.imds = lambda path, token=None, method="GET": meta[path]', 'w.imds = None').replace('"secretsmanager" in request.full_url', 'request.get_header("X-amz-target")'),
      { region: 'unused', domain: 'unused' },
      { AWS_ACCESS_KEY_ID: 'AKENV', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'eu-central-1', AWS_ENDPOINT_URL: 'http://127.0.0.1:4566', AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9000' },
    );
    // THEN
    expect(sent.map((r) => r.url)).toEqual(['http://127.0.0.1:4566/', 'http://127.0.0.1:9000/kit-packages/pooler/debian%2013.tar']);
    expect(sent.map((r) => r.host)).toEqual(['127.0.0.1:4566', '127.0.0.1:9000']);
    for (const r of sent) expect(r.auth).toMatch(/^AWS4-HMAC-SHA256 Credential=AKENV\/\d{8}\/eu-central-1\/(secretsmanager|s3)\/aws4_request, /);
  });
});

describe('the host agent\'s retries', () => {
  // IMDS answers; urlopen fails as `failures` says (an HTTP status, or "network"), then answers; sleeps are counted.
  const RETRY = `
import io
meta = {"/api/token": "t", "/meta-data/iam/security-credentials/": "r", "/meta-data/placement/region": "eu-west-1", "/meta-data/services/domain": "amazonaws.com",
        "/meta-data/iam/security-credentials/r": json.dumps({"AccessKeyId": "AKID", "SecretAccessKey": "s", "Token": "t"})}
w.imds = lambda path, token=None, method="GET": meta[path]
failures, calls, slept = list(inp), [], []
a.time.sleep = lambda s: slept.append(s)
class Response:
    def __enter__(self): return self
    def __exit__(self, *exc): return False
    def read(self): return b"{}"
def urlopen(request, timeout):
    calls.append(request.full_url)
    if failures:
        f = failures.pop(0)
        if f == "network":
            raise a.urllib.error.URLError("timed out")
        raise a.urllib.error.HTTPError(request.full_url, f, "error", {}, io.BytesIO(b""))
    return Response()
a.urllib.request.urlopen = urlopen
try:
    a.aws("POST", "monitoring", "monitoring", "/", b"x")
    outcome = "answered"
except Exception as e:
    outcome = type(e).__name__ + " " + str(getattr(e, "code", ""))
print(json.dumps({"outcome": outcome, "calls": len(calls), "slept": slept}))
`;

  test.each([
    ['a throttled call, then an answer', [503], { outcome: 'answered', calls: 2, slept: [1] }],
    ['the network, then access denied while the role propagates, then an answer', ['network', 403], { outcome: 'answered', calls: 3, slept: [1, 2] }],
    ['a malformed request (400)', [400], { outcome: 'HTTPError 400', calls: 1, slept: [] }],
    ['five failures in a row', [500, 500, 500, 500, 500], { outcome: 'HTTPError 500', calls: 5, slept: [1, 2, 4, 8] }],
  ])('GIVEN %s WHEN the agent calls AWS THEN it retries at most five times, 1+2+4+8 s apart, and not what cannot pass', (_label, failures, expected) => {
    expect(python(RETRY, failures)).toEqual(expected);
  });
});

describe('the host agent\'s instance metadata calls', () => {
  // An IMDS stand-in that fails its first `failures` requests (the network, or a 404 while the instance
  // profile's credentials are not there yet), then answers as IMDSv2 does; the AWS call behind it answers.
  const IMDS_STANDIN = `
import io
meta = {"/api/token": "t", "/meta-data/iam/security-credentials/": "r", "/meta-data/placement/region": "eu-west-1", "/meta-data/services/domain": "amazonaws.com",
        "/meta-data/iam/security-credentials/r": json.dumps({"AccessKeyId": "AKID", "SecretAccessKey": "s", "Token": "t"})}
failures, imds_calls, aws_calls, slept = list(inp), [], [], []
a.time.sleep = lambda s: slept.append(s)
class Response:
    def __init__(self, body): self.body = body
    def __enter__(self): return self
    def __exit__(self, *exc): return False
    def read(self): return self.body
def urlopen(request, timeout):
    if not request.full_url.startswith(w.IMDS):
        aws_calls.append(request.full_url)
        return Response(b"{}")
    path = request.full_url[len(w.IMDS):]
    imds_calls.append(path)
    if path == "/api/token" and request.get_method() != "PUT":
        raise a.urllib.error.HTTPError(request.full_url, 405, "token by PUT only", {}, io.BytesIO(b""))
    if failures:
        f = failures.pop(0)
        if f == "network":
            raise a.urllib.error.URLError("timed out")
        raise a.urllib.error.HTTPError(request.full_url, f, "error", {}, io.BytesIO(b""))
    return Response(meta[path].encode())
a.urllib.request.urlopen = urlopen
try:
    a.aws("POST", "monitoring", "monitoring", "/", b"x")
    outcome = "answered"
except Exception as e:
    outcome = type(e).__name__ + " " + str(getattr(e, "code", ""))
print(json.dumps({"outcome": outcome, "imds": len(imds_calls), "aws": len(aws_calls), "slept": slept}))
`;

  test.each([
    ['IMDS not answering the first token request', ['network'], { outcome: 'answered', imds: 6, aws: 1, slept: [1] }],
    ['IMDS not answering three requests, then no credentials yet (404)', ['network', 'network', 'network', 404], { outcome: 'answered', imds: 9, aws: 1, slept: [1, 2, 4, 8] }],
    ['IMDS failing five requests in a row', ['network', 'network', 'network', 'network', 'network'], { outcome: 'URLError ', imds: 5, aws: 0, slept: [1, 2, 4, 8] }],
  ])('GIVEN %s right after launch WHEN the agent calls AWS THEN it retries each metadata request at most five times, 1+2+4+8 s apart, before failing', (_label, failures, expected) => {
    expect(python(IMDS_STANDIN, failures)).toEqual(expected);
  });
});

/**
 * A host of three processes whose admin consoles answer from `consoles` (process -> command -> rows;
 * a process without an entry refuses the connection), and whose servers in `down` refuse connections.
 */
const FAKE_HOST = `
consoles, down = inp["consoles"], set(inp.get("down", []))
a.processes = lambda: inp.get("processes", ["rw-1", "rw-2", "ro-1"])
def admin(name, command):
    if name not in consoles:
        raise OSError("[Errno 111] Connection refused")
    return consoles[name][command]
a.admin = admin
def connect(target, timeout):
    if target[0] in down:
        raise OSError("[Errno 111] Connection refused")
    class Closed:
        def close(self):
            pass
    return Closed()
a.socket.create_connection = connect
`;

const databases = (host: string) => [{ name: 'app', host, port: '5432' }, { name: 'pgbouncer', host: null, port: '6432' }];
const pools = (clActive: number, svIdle: number, maxwait: number, maxwaitUs: number) => [
  { database: 'app', user: 'app', cl_active: String(clActive), cl_waiting: '1', cl_active_cancel_req: '0', cl_waiting_cancel_req: '0', sv_active: '1', sv_idle: String(svIdle), sv_used: '0', sv_tested: '0', sv_login: '0', maxwait: String(maxwait), maxwait_us: String(maxwaitUs) },
  // The admin console's own pool (no server): never a metric.
  { database: 'pgbouncer', user: 'pgbouncer', cl_active: '1', cl_waiting: '0', cl_active_cancel_req: '0', cl_waiting_cancel_req: '0', sv_active: '0', sv_idle: '0', sv_used: '0', sv_tested: '0', sv_login: '0', maxwait: '0', maxwait_us: '0' },
];
const stats = (xacts: number, queries: number) => [{ database: 'app', total_xact_count: String(xacts), total_query_count: String(queries) }, { database: 'pgbouncer', total_xact_count: '7', total_query_count: '7' }];
const adminConsole = (host: string, p: ReturnType<typeof pools>, s: ReturnType<typeof stats>) => ({ 'SHOW DATABASES': databases(host), 'SHOW POOLS': p, 'SHOW STATS': s });
const WRITER = 'kit.cluster-abc.eu-west-1.rds.amazonaws.com';
const READER = 'reader-1.abc.eu-west-1.rds.amazonaws.com';

describe('the host agent\'s health verdicts', () => {
  const consoles = { 'rw-1': adminConsole(WRITER, pools(1, 0, 0, 0), stats(0, 0)), 'rw-2': adminConsole(WRITER, pools(1, 0, 0, 0), stats(0, 0)), 'ro-1': adminConsole(READER, pools(1, 0, 0, 0), stats(0, 0)) };
  const verdict = (input: object) => python<{ rw: string[]; ro: string[] }>(`${FAKE_HOST}\nprint(json.dumps({"rw": a.health("rw"), "ro": a.health("ro")}))`, input);

  test('GIVEN every process answering and every server reachable WHEN asked THEN no problem, on both listeners', () => {
    expect(verdict({ consoles })).toEqual({ rw: [], ro: [] });
  });

  test('GIVEN one read/write process not answering WHEN asked THEN the read/write listener names it, the read-only one is healthy', () => {
    const rest = Object.fromEntries(Object.entries(consoles).filter(([name]) => name !== 'rw-2'));
    expect(verdict({ consoles: rest })).toEqual({ rw: ['rw-2: [Errno 111] Connection refused'], ro: [] });
  });

  test('GIVEN the reader refusing connections WHEN asked THEN the read-only listener names the server, the read/write one is healthy', () => {
    expect(verdict({ consoles, down: [READER] })).toEqual({ rw: [], ro: [`server ${READER}:5432 unreachable: [Errno 111] Connection refused`] });
  });
});

describe('the host agent\'s health probes (each connect is a "connection received" line in Aurora\'s log, log_connections=1)', () => {
  // Two verdicts: the consoles of `first`, then of `second`; the connects each makes, and the second's problems.
  const twoVerdicts = (first: object, second: object, down: string[] = [], secondsBetween = 3) =>
    python<{ connects: string[][]; problems: string[] }>(
      `${FAKE_HOST}
connects, clock = [], [1000.0]
a.time.monotonic = lambda: clock[0]
real_connect = a.socket.create_connection
def counted(target, timeout):
    connects[-1].append(target[0])
    return real_connect(target, timeout)
a.socket.create_connection = counted
connects.append([])
a.health("ro")
consoles.update(inp["second"])
clock[0] += inp["seconds"]
connects.append([])
problems = a.health("ro")
print(json.dumps({"connects": [sorted(c) for c in connects], "problems": problems}))`,
      { consoles: first, second, down, seconds: secondsBetween },
    );
  const roConsole = (queries: number) => ({ 'ro-1': adminConsole(READER, pools(1, 1, 0, 0), stats(queries, queries)) });

  test('GIVEN the reader\'s pool completing queries between two verdicts WHEN the second is made THEN it does not connect to the reader: the answers stand for it', () => {
    const result = twoVerdicts(roConsole(10), roConsole(25));
    expect(result).toEqual({ connects: [[READER], []], problems: [] });
  });

  test('GIVEN an idle pool (no query since the previous verdict) WHEN the second verdict is made THEN it connects to the reader again', () => {
    expect(twoVerdicts(roConsole(10), roConsole(10))).toEqual({ connects: [[READER], [READER]], problems: [] });
  });

  test('GIVEN the reader gone and its pool answering nothing since WHEN the second verdict is made THEN the connect finds it unreachable', () => {
    expect(twoVerdicts(roConsole(10), roConsole(10), [READER])).toEqual({ connects: [[READER], [READER]], problems: [`server ${READER}:5432 unreachable: [Errno 111] Connection refused`] });
  });

  test('GIVEN queries completed, but the previous verdict older than two check intervals WHEN the next verdict is made THEN it connects: old answers do not stand for the server now', () => {
    expect(twoVerdicts(roConsole(10), roConsole(25), [READER], 21)).toEqual({ connects: [[READER], [READER]], problems: [`server ${READER}:5432 unreachable: [Errno 111] Connection refused`] });
  });

  test('GIVEN a restarted process (its totals lower) WHEN the next verdict is made THEN it connects', () => {
    expect(twoVerdicts(roConsole(10), roConsole(3))).toEqual({ connects: [[READER], [READER]], problems: [] });
  });
});

describe('the host agent\'s exporter', () => {
  const sampleOf = (consoles: object) => python<{ gauges: Array<[string, string, string, number]>; totals: Array<[string, string, string, string, number]> }>(
    `${FAKE_HOST}\ng, t = a.sample()\nprint(json.dumps({"gauges": sorted([list(k) + [m, v] for k, vs in g.items() for m, v in vs.items()]), "totals": sorted([[n, d, m, "/".join(k), v] for (n, d, m, k), v in t.items()])}))`,
    { consoles },
  );

  test('GIVEN two read/write processes and a read-only one WHEN sampled THEN counts add up over the processes of a target, MaxWait is the longest, and the console\'s own pool is left out', () => {
    const result = sampleOf({ 'rw-1': adminConsole(WRITER, pools(3, 2, 0, 250000), stats(10, 30)), 'rw-2': adminConsole(WRITER, pools(4, 1, 1, 500000), stats(5, 5)), 'ro-1': adminConsole(READER, pools(2, 2, 0, 0), stats(1, 2)) });
    expect(result.gauges).toEqual([
      ['READ_ONLY', 'reader-1', 'ClientConnections', 3],
      ['READ_ONLY', 'reader-1', 'ClientsWaiting', 1],
      ['READ_ONLY', 'reader-1', 'MaxWait', 0],
      ['READ_ONLY', 'reader-1', 'ServerConnections', 3],
      ['READ_WRITE', 'kit', 'ClientConnections', 9],
      ['READ_WRITE', 'kit', 'ClientsWaiting', 2],
      ['READ_WRITE', 'kit', 'MaxWait', 1.5],
      ['READ_WRITE', 'kit', 'ServerConnections', 5],
    ]);
    expect(result.totals).toEqual([
      ['ro-1', 'app', 'Queries', 'READ_ONLY/reader-1', 2],
      ['ro-1', 'app', 'Transactions', 'READ_ONLY/reader-1', 1],
      ['rw-1', 'app', 'Queries', 'READ_WRITE/kit', 30],
      ['rw-1', 'app', 'Transactions', 'READ_WRITE/kit', 10],
      ['rw-2', 'app', 'Queries', 'READ_WRITE/kit', 5],
      ['rw-2', 'app', 'Transactions', 'READ_WRITE/kit', 5],
    ]);
  });

  test('GIVEN a session listener\'s process beside a transaction one of the same writer WHEN sampled THEN its pools are a Listener of their own, not added to the transaction pools', () => {
    const result = python<{ gauges: Array<[string, string, string, number]> }>(
      `${FAKE_HOST}\ng, t = a.sample()\nprint(json.dumps({"gauges": sorted([list(k) + [m, v] for k, vs in g.items() for m, v in vs.items()])}))`,
      { processes: ['rw-1', 'sw-1'], consoles: { 'rw-1': adminConsole(WRITER, pools(3, 2, 0, 0), stats(10, 30)), 'sw-1': adminConsole(WRITER, pools(4, 1, 0, 0), stats(5, 5)) } },
    );
    expect(result.gauges.filter(([, , metric]) => metric === 'ClientConnections')).toEqual([
      ['READ_WRITE', 'kit', 'ClientConnections', 4],
      ['READ_WRITE_SESSION', 'kit', 'ClientConnections', 5],
    ]);
  });

  test('GIVEN a read-only session process WHEN its listener\'s health is asked THEN it is checked on its own path key', () => {
    expect(python<{ sr: string[]; paths: Record<string, string> }>(`${FAKE_HOST}\nprint(json.dumps({"sr": a.health("sr"), "paths": a.kit()["healthPaths"]}))`, { processes: ['ro-1', 'sr-1'], consoles: { 'sr-1': adminConsole(READER, pools(1, 0, 0, 0), stats(0, 0)) } })).toEqual({
      sr: [],
      paths: { '/read-write': 'rw', '/read-only': 'ro', '/read-write-session': 'sw', '/read-only-session': 'sr' },
    });
  });

  test('GIVEN a process restarted since the previous sample (its counters lower) WHEN the increase is computed THEN it counts what the new process counted', () => {
    const key = '["READ_WRITE", "kit"]';
    const deltas = python<Array<[string, number]>>(
      `k = tuple(json.loads('${key}'))\nprev = {("rw-1", "app", "Transactions", k): 100, ("rw-2", "app", "Transactions", k): 40}\nnow = {("rw-1", "app", "Transactions", k): 130, ("rw-2", "app", "Transactions", k): 6}\nprint(json.dumps(sorted([[m, v] for (kk, m), v in a.increase(prev, now).items()])))`,
    );
    expect(deltas).toEqual([['Transactions', 30 + 6]]);
  });

  test('GIVEN datapoints WHEN published to CloudWatch THEN one signed PutMetricData request of the namespace, each datapoint with its unit and the Fleet, Listener and Target dimensions', () => {
    // GIVEN CloudWatch's endpoint set as the AWS SDKs take it (AWS_ENDPOINT_URL_CLOUDWATCH), a loopback server that records the request
    const RECORD = `
import http.server, threading
got = []
class Record(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        got.append({"path": self.path, "auth": self.headers["Authorization"], "body": self.rfile.read(int(self.headers["Content-Length"])).decode()})
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Record)
threading.Thread(target=server.serve_forever, daemon=True).start()
import os
os.environ["AWS_ENDPOINT_URL_CLOUDWATCH"] = "http://127.0.0.1:" + str(server.server_address[1])
a.put_metric_data("kit-stack/Pooler", [(("READ_WRITE", "kit"), "MaxWait", 1.5), (("READ_ONLY", "reader-1"), "Transactions", 12)], "2026-11-23T16:00:00Z")
server.shutdown()
print(json.dumps(got))`;
    // WHEN
    const got = python<Array<{ path: string; auth: string; body: string }>>(RECORD, null, { AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'eu-west-1' });
    // THEN
    expect(got).toHaveLength(1);
    expect(got[0]!.path).toBe('/');
    expect(got[0]!.auth).toMatch(/^AWS4-HMAC-SHA256 Credential=AKID\/\d{8}\/eu-west-1\/monitoring\/aws4_request, /);
    const form = Object.fromEntries(new URLSearchParams(got[0]!.body));
    expect(form).toEqual({
      Action: 'PutMetricData',
      Version: '2010-08-01',
      Namespace: POOLER_METRICS_NAMESPACE,
      ...Object.fromEntries(
        [['READ_WRITE', 'kit', 'MaxWait', '1.5'], ['READ_ONLY', 'reader-1', 'Transactions', '12.0']].flatMap(([listener, target, metric, value], i) => {
          const p = `MetricData.member.${i + 1}.`;
          return [
            [`${p}MetricName`, metric],
            [`${p}Unit`, POOLER_METRICS.find((m) => m.metricName === metric)!.unit],
            [`${p}Value`, value],
            [`${p}Timestamp`, '2026-11-23T16:00:00Z'],
            ...[['Fleet', 'kit-stack/Pooler'], ['Listener', listener!], ['Target', target!]].flatMap(([n, v], j) => [[`${p}Dimensions.member.${j + 1}.Name`, n!], [`${p}Dimensions.member.${j + 1}.Value`, v!]]),
          ];
        }),
      ),
    });
  });
});

describe('the host agent\'s read-only routing', () => {
  const spec: PoolerFleetSpec = { hosts: 2, vcpusPerHost: 2, readers: 2, maxConnections: 200, pool: { maxConnectionsPercent: 50, maxIdleConnectionsPercent: 5, connectionBorrowTimeoutSeconds: 120 }, tcpIdleTimeoutSeconds: 350 };
  const names = { ClusterEndpoint: 'orders.cluster-abc.eu-west-1.rds.amazonaws.com', WriterInstanceEndpoint: 'orders-1.abc.eu-west-1.rds.amazonaws.com', ReaderEndpoint1: 'orders-2.abc.eu-west-1.rds.amazonaws.com', ReaderEndpoint2: 'orders-3.abc.eu-west-1.rds.amazonaws.com', DatabaseName: 'orders', ServerPort: '5432', ServerUser: 'pooler_reader' };

  /** route_once on the model's route files, names resolving as `dns` says; the files after, the RELOADs and the changes. */
  function routeOnce(dns: Record<string, string[] | null>, current: Record<string, string> = {}, fleet: PoolerFleetSpec = spec): { files: Record<string, string>; reloads: string[]; changes: Array<Record<string, string>> } {
    const root = mkdtempSync(join(tmpdir(), 'apk-route-'));
    try {
      const processes = planFleetProcesses(fleet);
      mkdirSync(join(root, FLEET_PATHS.routesDir), { recursive: true });
      mkdirSync(join(root, FLEET_PATHS.dir), { recursive: true });
      writeFileSync(join(root, FLEET_PATHS.dir, 'processes'), processes.map(fleetProcessName).join(' '));
      for (const p of processes.filter((q) => q.listener === 'readOnly' || q.listener === 'readOnlySession')) {
        let text = substitutePlaceholders(renderFleetRouteIni(p), names);
        const name = fleetProcessName(p);
        if (current[name] !== undefined) text = text.replace(/= host=\S+/, `= host=${current[name]}`);
        writeFileSync(join(root, FLEET_PATHS.routesDir, `${name}.ini`), text);
      }
      const out = python<{ reloads: string[]; changes: Array<Record<string, string>> }>(
        `a.kit()["paths"].update(processes=${JSON.stringify(join(root, FLEET_PATHS.dir, 'processes'))}, routesDir=${JSON.stringify(join(root, FLEET_PATHS.routesDir))})\nreloads = []\na.admin = lambda name, command: reloads.append(name + " " + command) or []\nresolve = lambda n: None if inp.get(n) is None else set(inp[n])\nprint(json.dumps({"changes": a.route_once(resolve), "reloads": reloads}))`,
        dns,
      );
      const files = Object.fromEntries(readdirSync(join(root, FLEET_PATHS.routesDir)).map((f) => [f, readFileSync(join(root, FLEET_PATHS.routesDir, f), 'utf8')]));
      return { files, ...out };
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
  const hostOf = (text: string | undefined): string => /= host=(\S+)/.exec(text ?? '')![1]!;

  test('GIVEN every reader in recovery and the cluster endpoint on the writer WHEN routed THEN nothing changes and nothing reloads', () => {
    // WHEN
    const r = routeOnce({ [names.ClusterEndpoint]: ['10.0.0.1'], [names.WriterInstanceEndpoint]: ['10.0.0.1'], [names.ReaderEndpoint1]: ['10.0.0.2'], [names.ReaderEndpoint2]: ['10.0.0.3'] });
    // THEN
    expect(r.changes).toEqual([]);
    expect(r.reloads).toEqual([]);
    expect(hostOf(r.files['ro-1.ini'])).toBe(names.ReaderEndpoint1);
  });

  test('GIVEN reader 1 promoted (the cluster endpoint resolves to it) WHEN routed THEN reader 1\'s processes pool for the former writer\'s instance endpoint, with a RELOAD each, and reader 2\'s stay', () => {
    // WHEN
    const r = routeOnce({ [names.ClusterEndpoint]: ['10.0.0.2'], [names.WriterInstanceEndpoint]: ['10.0.0.1'], [names.ReaderEndpoint1]: ['10.0.0.2'], [names.ReaderEndpoint2]: ['10.0.0.3'] });
    // THEN
    expect(r.changes).toEqual([{ event: 'read-only-route', process: 'ro-1', from: names.ReaderEndpoint1, to: names.WriterInstanceEndpoint }]);
    expect(r.reloads).toEqual(['ro-1 RELOAD']);
    expect(hostOf(r.files['ro-1.ini'])).toBe(names.WriterInstanceEndpoint);
    expect(hostOf(r.files['ro-2.ini'])).toBe(names.ReaderEndpoint2);
    // The rest of the pool's line is untouched: the guard, the budget.
    expect(r.files['ro-1.ini']!.replace(`= host=${names.WriterInstanceEndpoint}`, `= host=${names.ReaderEndpoint1}`)).toBe(substitutePlaceholders(renderFleetRouteIni(planFleetProcesses(spec).find((p) => fleetProcessName(p) === 'ro-1')!), names));
  });

  test('GIVEN a read-only session listener and reader 1 promoted WHEN routed THEN its session processes of reader 1 move to the former writer too', () => {
    // WHEN
    const r = routeOnce({ [names.ClusterEndpoint]: ['10.0.0.2'], [names.WriterInstanceEndpoint]: ['10.0.0.1'], [names.ReaderEndpoint1]: ['10.0.0.2'], [names.ReaderEndpoint2]: ['10.0.0.3'] }, {}, { ...spec, sessionRoles: [EndpointRole.READ_ONLY] });
    // THEN
    expect(r.reloads).toEqual(['ro-1 RELOAD', 'sr-1 RELOAD']);
    expect([hostOf(r.files['sr-1.ini']), hostOf(r.files['sr-2.ini'])]).toEqual([names.WriterInstanceEndpoint, names.ReaderEndpoint2]);
  });

  test('GIVEN reader 1\'s processes on the spare and reader 1 a reader again WHEN routed THEN they go back home', () => {
    // WHEN
    const r = routeOnce({ [names.ClusterEndpoint]: ['10.0.0.1'], [names.WriterInstanceEndpoint]: ['10.0.0.1'], [names.ReaderEndpoint1]: ['10.0.0.2'], [names.ReaderEndpoint2]: ['10.0.0.3'] }, { 'ro-1': names.WriterInstanceEndpoint });
    // THEN
    expect(r.changes).toEqual([{ event: 'read-only-route', process: 'ro-1', from: names.WriterInstanceEndpoint, to: names.ReaderEndpoint1 }]);
    expect(hostOf(r.files['ro-1.ini'])).toBe(names.ReaderEndpoint1);
  });

  test('GIVEN the cluster endpoint not resolving WHEN routed THEN the pools stay where they are', () => {
    // WHEN
    const r = routeOnce({ [names.ClusterEndpoint]: null, [names.WriterInstanceEndpoint]: ['10.0.0.1'], [names.ReaderEndpoint1]: ['10.0.0.2'], [names.ReaderEndpoint2]: ['10.0.0.3'] }, { 'ro-2': names.WriterInstanceEndpoint });
    // THEN
    expect(r.changes).toEqual([]);
    expect(hostOf(r.files['ro-2.ini'])).toBe(names.WriterInstanceEndpoint);
  });
});

describe('the fetcher\'s rollout calls (apk-fetch signal, wait-serving)', () => {
  /** Runs `body` with the fetcher imported as `f` (the user data's program), IMDS answering as an instance of `inp.region`. */
  function fetcher<T>(body: string, input: unknown): T {
    const script = `import io, json, sys, urllib.parse\nsys.path.insert(0, ${JSON.stringify(hostFilesDir())})\nimport apk_aws as f\ninp = json.loads(sys.stdin.read())
meta = {"/api/token": "token", "/meta-data/iam/security-credentials/": "host-role", "/meta-data/instance-id": "i-0123456789abcdef0",
        "/meta-data/iam/security-credentials/host-role": json.dumps({"AccessKeyId": "AKID", "SecretAccessKey": "secret", "Token": "session"}),
        "/meta-data/placement/region": inp["region"], "/meta-data/services/domain": inp["domain"]}
f.imds = lambda path, token=None, method="GET": meta[path]
f.time.sleep = lambda s: None
${body}\n`;
    const run = spawnSync('python3', ['-c', script], { input: JSON.stringify(input), encoding: 'utf8', env: { PATH: process.env.PATH ?? '', PYTHONDONTWRITEBYTECODE: '1' } });
    if (run.status !== 0) throw new Error(run.stderr);
    return JSON.parse(run.stdout) as T;
  }
  const SIGNAL = `
sent = []
class Response:
    def __enter__(self): return self
    def __exit__(self, *exc): return False
    def read(self): return b"<SignalResourceResponse/>"
def urlopen(request, timeout):
    sent.append({"url": request.full_url, "method": request.get_method(), "auth": request.get_header("Authorization"), "body": dict(urllib.parse.parse_qsl(request.data.decode()))})
    if inp.get("status"):
        raise f.urllib.error.HTTPError(request.full_url, inp["status"], "error", {}, io.BytesIO(b""))
    return Response()
f.urllib.request.urlopen = urlopen
try:
    f.signal("Stack-1", "PoolerHostsASG1A2B", inp["region"], "SUCCESS")
    outcome = "sent"
except Exception as e:
    outcome = "HTTPError " + str(getattr(e, "code", ""))
print(json.dumps({"outcome": outcome, "sent": sent}))
`;

  test.each([
    ['aws', 'eu-west-1', 'amazonaws.com'],
    ['aws-cn', 'cn-north-1', 'amazonaws.com.cn'],
  ])('GIVEN an instance of the %s partition WHEN it signals THEN SignalResource goes to the Region\'s CloudFormation, SigV4-signed for it, naming the stack, the group and the instance', (_partition, region, domain) => {
    // WHEN
    const { outcome, sent } = fetcher<{ outcome: string; sent: Array<{ url: string; method: string; auth: string; body: Record<string, string> }> }>(SIGNAL, { region, domain });
    // THEN
    expect(outcome).toBe('sent');
    expect(sent).toEqual([{
      url: `https://cloudformation.${region}.${domain}/`,
      method: 'POST',
      auth: expect.stringMatching(new RegExp(`^AWS4-HMAC-SHA256 Credential=AKID/\\d{8}/${region}/cloudformation/aws4_request, SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature=[0-9a-f]{64}$`)),
      body: { Action: 'SignalResource', Version: '2010-05-15', StackName: 'Stack-1', LogicalResourceId: 'PoolerHostsASG1A2B', UniqueId: 'i-0123456789abcdef0', Status: 'SUCCESS' },
    }]);
  });

  test.each([
    [400, 1],
    [403, 5],
  ])('GIVEN CloudFormation answers %s WHEN the host signals THEN it tries %s time(s): a stack no longer waiting is final, an access denied may be the role\'s policy propagating', (status, tries) => {
    const { outcome, sent } = fetcher<{ outcome: string; sent: unknown[] }>(SIGNAL, { region: 'eu-west-1', domain: 'amazonaws.com', status });
    expect([outcome, sent.length]).toEqual([`HTTPError ${status}`, tries]);
  });

  test('GIVEN health paths answering 503 then 200 WHEN the host waits for them THEN it returns once both answer 200 in one pass; never answering, it exits naming the path', () => {
    const WAIT = `
answers = list(inp["answers"])
def urlopen(url, timeout=5):
    code = answers.pop(0) if answers else inp["last"]
    if code != 200:
        raise f.urllib.error.HTTPError(url, code, "unavailable", {}, io.BytesIO(b""))
    return io.BytesIO(b"ok")
f.urllib.request.urlopen = urlopen
clock = [0.0]
def monotonic():
    clock[0] += 1.0
    return clock[0]
f.time.monotonic = monotonic
try:
    f.wait_serving(inp["seconds"], ["http://127.0.0.1:6480/read-write", "http://127.0.0.1:6480/read-only"])
    print(json.dumps("serving"))
except SystemExit as e:
    print(json.dumps(str(e)))
`;
    // GIVEN read-write 200 then read-only 503, then both 200
    expect(fetcher<string>(WAIT, { region: 'eu-west-1', domain: 'amazonaws.com', answers: [200, 503, 200, 200], last: 200, seconds: 300 })).toBe('serving');
    // GIVEN read-only never serving
    expect(fetcher<string>(WAIT, { region: 'eu-west-1', domain: 'amazonaws.com', answers: [], last: 503, seconds: 10 })).toMatch(/^not serving after 10 s: http:\/\/127\.0\.0\.1:6480\/read-write: HTTP Error 503/);
  });
});
