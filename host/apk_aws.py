#!/usr/bin/python3
"""aurora-proxy-kit PgBouncer engine: the host's AWS calls, and its packages fetcher (apk-fetch).

The user data carries this file (host/apk_aws.py in the kit), installed as apk-fetch: it reads the packages
object (`apk-fetch <bucket> <key> <file>`) and makes the rollout's calls (`signal`, `wait-serving`). The host
agent (apk_host.py), which comes in the packages object, imports it for its own AWS calls. Standard library only:
Debian's cloud image has Python 3 for cloud-init, and no AWS CLI or SDK.
"""
import datetime
import hashlib
import hmac
import json
import os
import sys
import time
import urllib.parse
import urllib.request

IMDS = "http://169.254.169.254/latest"


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
    # The SDKs' own order: credentials in the environment first (none on a host), then the instance role's.
    if os.environ.get("AWS_ACCESS_KEY_ID") and os.environ.get("AWS_SECRET_ACCESS_KEY"):
        region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
        return os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"], os.environ.get("AWS_SESSION_TOKEN", ""), (region, "amazonaws.com")
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


# Each service's identifier in the SDKs' endpoint settings (AWS SDKs and Tools Reference Guide, "Service-specific
# endpoints"): AWS_ENDPOINT_URL_<id>, else AWS_ENDPOINT_URL, sends its calls elsewhere (unset on a host).
ENDPOINT_IDS = {"s3": "S3", "secretsmanager": "SECRETS_MANAGER", "monitoring": "CLOUDWATCH", "cloudformation": "CLOUDFORMATION"}


def endpoint(service, host, region, domain, bucket=None):
    """(URL prefix, Host header, path prefix) of a service's calls: AWS's name, or the configured endpoint URL."""
    url = os.environ.get("AWS_ENDPOINT_URL_" + ENDPOINT_IDS[service]) or os.environ.get("AWS_ENDPOINT_URL")
    if not url:
        name = (bucket + "." if bucket else "") + host + "." + region + "." + domain
        return "https://" + name, name, ""
    # An endpoint URL takes S3's path-style addressing, as the SDKs do for an address without the bucket's DNS name.
    parts = urllib.parse.urlsplit(url)
    return parts.scheme + "://" + parts.netloc, parts.netloc, "/" + bucket if bucket else ""


def aws(method, service, host, path, body=b"", headers=None, bucket=None):
    key_id, secret, session, (region, domain) = credentials()
    base, name, prefix = endpoint(service, host, region, domain, bucket)
    signed = sign(method, name, prefix + path, "", headers or {}, body, service, region, key_id, secret, session)
    return fetch(urllib.request.Request(base + prefix + path, data=body or None, method=method, headers=signed), 10, (400, 404))


def s3_get(bucket, key, out):
    data = aws("GET", "s3", "s3", "/" + urllib.parse.quote(key), bucket=bucket)
    with open(out, "wb") as f:
        f.write(data)


def signal(stack, logical_id, region, status):
    """CloudFormation's SignalResource (Query protocol), the instance id as its UniqueId, as AWS asks for instances."""
    key_id, secret, session, (_, domain) = credentials()
    token = imds("/api/token", method="PUT")
    params = {"Action": "SignalResource", "Version": "2010-05-15", "StackName": stack, "LogicalResourceId": logical_id, "UniqueId": imds("/meta-data/instance-id", token), "Status": status}
    body = urllib.parse.urlencode(params).encode()
    base, name, _ = endpoint("cloudformation", "cloudformation", region, domain)
    headers = sign("POST", name, "/", "", {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"}, body, "cloudformation", region, key_id, secret, session)
    # 400: the stack no longer waits for this host (timed out, or rolled back): retrying cannot help.
    fetch(urllib.request.Request(base + "/", data=body, method="POST", headers=headers), 10, (400,))


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
