/**
 * The PgBouncer engine's host agent: a standard-library Python 3 program the bootstrap installs as
 * /usr/local/sbin/apk-host (Debian's cloud image has Python 3 for cloud-init; no AWS CLI or SDK is
 * installed). It makes the host's few AWS calls, signed with Signature Version 4 from the instance
 * role's IMDSv2 credentials, and computes the SCRAM verifiers of the auth file.
 *
 *   apk-host auth-file <out> <server-secret-arn> <consumer-secret-arn>...
 *       PgBouncer's auth file (0600): each consumer as the SCRAM verifier the role bootstrap sets on
 *       Aurora too (scram-salt.ts), the read-only listener's server role with its password (PgBouncer
 *       logs in as it); no password passes through a command line or the shell
 *   apk-host tls <arn> <dir>              the listeners' certificate, key and CA from a secret
 *   apk-host s3-get <bucket> <key> <file>  an S3 object, through the VPC's gateway endpoint
 *   apk-host serve                        the load balancer's health endpoint and the CloudWatch metrics
 *                                          exporter, as a service (pgbouncer-host-serve.ts)
 *
 * APK_AWS_STANDIN=<dir> replaces the AWS calls with files (the rehearsal's stand-ins): a secret is
 * <dir>/secrets/<the ARN's last segment>.json, an object <dir>/s3/<bucket>/<key>.
 *
 * The text below is Python; it must not contain "${" (the bootstrap around it is a template both
 * flavours substitute).
 */
import { createHash } from 'node:crypto';
import { HOST_ROUTE_SOURCE } from './pgbouncer-host-route';
import { HOST_SERVE_SOURCE } from './pgbouncer-host-serve';
import { SCRAM_SALT_CONTEXT } from './scram-salt';

export const HOST_AGENT_PATH = '/usr/local/sbin/apk-host';

/** The AWS calls both programs make: IMDSv2 credentials, SigV4, bounded retries, an S3 object. */
const AWS_CALLS = String.raw`IMDS = "http://169.254.169.254/latest"


def fetch(request, timeout, final=()):
    # Five tries, 1+2+4+8 s apart: the network, throttling, and at boot IMDS not answering yet (or without the
    # instance profile's credentials) or an access denied while the role's policy propagates; a bootstrap that
    # fails powers the host off. An HTTP status in final (a malformed or absent request) fails at once.
    for attempt in range(5):
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.read()
        except OSError as e:
            if attempt == 4 or getattr(e, "code", None) in final:
                raise
            time.sleep(2 ** attempt)


def imds(path, token=None, method="GET"):
    headers = {"X-aws-ec2-metadata-token-ttl-seconds": "300"} if token is None else {"X-aws-ec2-metadata-token": token}
    return fetch(urllib.request.Request(IMDS + path, method=method, headers=headers), 5).decode()


def credentials():
    token = imds("/api/token", method="PUT")
    role = imds("/meta-data/iam/security-credentials/", token).split("\n")[0]
    c = json.loads(imds("/meta-data/iam/security-credentials/" + role, token))
    # The Region's DNS suffix from the instance itself: amazonaws.com, or amazonaws.com.cn in China.
    where = imds("/meta-data/placement/region", token), imds("/meta-data/services/domain", token)
    return c["AccessKeyId"], c["SecretAccessKey"], c["Token"], where


def sign(method, host, path, query, headers, body, service, region, key_id, secret, session):
    now = datetime.datetime.now(datetime.timezone.utc)
    amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    payload = hashlib.sha256(body).hexdigest()
    headers = dict(headers, **{"host": host, "x-amz-date": amz_date, "x-amz-security-token": session, "x-amz-content-sha256": payload})
    # SigV4 signs lower-case header names; the request sends them as given.
    lower = {k.lower(): str(v).strip() for k, v in headers.items()}
    names = sorted(lower)
    canonical_headers = "".join(k + ":" + lower[k] + "\n" for k in names)
    signed = ";".join(names)
    canonical = "\n".join([method, path, query, canonical_headers, signed, payload])
    scope = "/".join([day, region, service, "aws4_request"])
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    k = ("AWS4" + secret).encode()
    for part in (day, region, service, "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["Authorization"] = "AWS4-HMAC-SHA256 Credential=" + key_id + "/" + scope + ", SignedHeaders=" + signed + ", Signature=" + signature
    return headers


def aws(method, service, host, path, body=b"", headers=None):
    key_id, secret, session, (region, domain) = credentials()
    name = host + "." + region + "." + domain
    signed = sign(method, name, path, "", headers or {}, body, service, region, key_id, secret, session)
    return fetch(urllib.request.Request("https://" + name + path, data=body or None, method=method, headers=signed), 10, (400, 404))


def s3_get(bucket, key, out):
    data = aws("GET", "s3", bucket + ".s3", "/" + urllib.parse.quote(key))
    with open(out, "wb") as f:
        f.write(data)


`;

/**
 * The rollout's calls (pgbouncer-rollout.ts), in the fetcher because a bootstrap that fails before the
 * agent is installed must still signal: CloudFormation's SignalResource (Query protocol, SigV4 with the
 * instance role's credentials; the instance id as the signal's UniqueId, as AWS asks for instances), and
 * the wait for both listeners to serve through the health endpoint.
 */
const HOST_ROLLOUT_CALLS = String.raw`def signal(stack, logical_id, region, status):
    key_id, secret, session, (_, domain) = credentials()
    token = imds("/api/token", method="PUT")
    params = {"Action": "SignalResource", "Version": "2010-05-15", "StackName": stack, "LogicalResourceId": logical_id, "UniqueId": imds("/meta-data/instance-id", token), "Status": status}
    body = urllib.parse.urlencode(params).encode()
    name = "cloudformation." + region + "." + domain
    headers = sign("POST", name, "/", "", {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"}, body, "cloudformation", region, key_id, secret, session)
    # 400: the stack no longer waits for this host (timed out, or rolled back): retrying cannot help.
    fetch(urllib.request.Request("https://" + name + "/", data=body, method="POST", headers=headers), 10, (400,))


def wait_serving(seconds, urls):
    # Every URL answering 200 in one pass: the load balancer's health paths, so both listeners serve.
    deadline = time.monotonic() + seconds
    while True:
        try:
            for url in urls:
                urllib.request.urlopen(url, timeout=5).close()
            return
        except OSError as e:
            if time.monotonic() > deadline:
                sys.exit("not serving after " + str(seconds) + " s: " + url + ": " + str(e))
            time.sleep(2)


`;

/**
 * The bootstrap's fetcher, the one program the user data carries (EC2's 16 KB): what the host needs to
 * read the packages object, `apk-fetch <bucket> <key> <file>`, and the rollout's calls (`signal`,
 * `wait-serving`). The agent itself comes in that object.
 */
export const HOST_FETCH_PATH = '/usr/local/sbin/apk-fetch';
export const HOST_FETCH_SOURCE = String.raw`#!/usr/bin/python3
"""aurora-proxy-kit PgBouncer engine packages fetcher (lib/model/pgbouncer-host-agent.ts); do not edit."""
import datetime, hashlib, hmac, json, sys, time, urllib.parse, urllib.request

${AWS_CALLS}${HOST_ROLLOUT_CALLS}
if __name__ == "__main__":
    if sys.argv[1:2] == ["signal"] and len(sys.argv) == 6:
        signal(*sys.argv[2:])
    elif sys.argv[1:2] == ["wait-serving"] and len(sys.argv) >= 4:
        wait_serving(int(sys.argv[2]), sys.argv[3:])
    elif len(sys.argv) == 4:
        s3_get(*sys.argv[1:])
    else:
        sys.stderr.write("usage: apk-fetch <bucket> <key> <file> | signal <stack> <logical id> <region> SUCCESS|FAILURE | wait-serving <seconds> <url>...\n")
        sys.exit(2)
`;

/**
 * The agent, shipped in the packages object (lib/packaging/pooler-packages.ts) and installed by the
 * bootstrap only when its SHA-256 is the one the user data pins (hostAgentSha256): a packages object
 * built by another version of the kit stops the host at install.
 */
export const HOST_AGENT_SOURCE = String.raw`#!/usr/bin/python3
"""aurora-proxy-kit PgBouncer engine host agent (lib/model/pgbouncer-host-agent.ts); do not edit."""
import base64, datetime, hashlib, hmac, json, os, sys, time, unicodedata, urllib.parse, urllib.request

SALT_CONTEXT = b"${SCRAM_SALT_CONTEXT}"

${AWS_CALLS}
def secret(arn):
    standin = os.environ.get("APK_AWS_STANDIN")
    if standin:
        with open(os.path.join(standin, "secrets", arn.split(":")[-1] + ".json")) as f:
            return f.read()
    body = json.dumps({"SecretId": arn}).encode()
    target = {"X-Amz-Target": "secretsmanager.GetSecretValue", "Content-Type": "application/x-amz-json-1.1"}
    return json.loads(aws("POST", "secretsmanager", "secretsmanager", "/", body, target))["SecretString"]


def verifier(user, password, iterations=4096):
    # The salt comes from the secret itself, so the role bootstrap (which sets the same verifier on
    # Aurora) and every host compute the same verifier without sharing state; SCRAM pass-through needs that.
    password = unicodedata.normalize("NFKC", password).encode()
    salt = hmac.new(password, SALT_CONTEXT + user.encode(), hashlib.sha256).digest()[:16]
    salted = hashlib.pbkdf2_hmac("sha256", password, salt, iterations)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
    b64 = lambda b: base64.b64encode(b).decode()
    return "SCRAM-SHA-256$" + str(iterations) + ":" + b64(salt) + "$" + b64(stored_key) + ":" + b64(server_key)


def quoted(value):
    if "\n" in value or "\r" in value:
        raise ValueError("auth file entries cannot contain line breaks")
    return '"' + value.replace('"', '""') + '"'


def write_private(path, text):
    # Written beside, then renamed: PgBouncer never reads half a file, and the mode is set before the content lands.
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    owner = os.environ.get("APK_FILE_OWNER")
    if owner:
        uid, gid = (int(x) for x in owner.split(":"))
        os.chown(tmp, uid, gid)
    os.replace(tmp, path)


def auth_file(out, server_arn, consumer_arns):
    lines = []
    server = json.loads(secret(server_arn))
    lines.append(quoted(server["username"]) + " " + quoted(server["password"]))
    for arn in " ".join(consumer_arns).split():
        s = json.loads(secret(arn))
        lines.append(quoted(s["username"]) + " " + quoted(verifier(s["username"], s["password"])))
    write_private(out, "\n".join(lines) + "\n")


def tls(arn, directory):
    s = json.loads(secret(arn))
    for name, field in (("server.crt", "certificate"), ("ca.crt", "ca"), ("server.key", "privateKey")):
        write_private(os.path.join(directory, name), s[field])

${HOST_SERVE_SOURCE}
${HOST_ROUTE_SOURCE}

def main(argv):
    if argv[:1] == ["auth-file"] and len(argv) >= 3:
        auth_file(argv[1], argv[2], argv[3:])
    elif argv[:1] == ["tls"] and len(argv) == 3:
        tls(argv[1], argv[2])
    elif argv[:1] == ["s3-get"] and len(argv) == 4:
        s3_get(argv[1], argv[2], argv[3])
    elif argv == ["serve"]:
        serve()
    else:
        sys.stderr.write("usage: apk-host auth-file <out> <server-secret-arn> <consumer-secret-arn>... | tls <arn> <dir> | s3-get <bucket> <key> <file> | serve\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
`;

/** The file name of the agent in the packages object. */
export const HOST_AGENT_PACKAGE_FILE = 'apk-host';

/** The SHA-256 of the agent as shipped: the user data pins it, so a host installs only this kit's agent. */
export function hostAgentSha256(): string {
  return createHash('sha256').update(HOST_AGENT_SOURCE).digest('hex');
}
