#!/usr/bin/python3
"""aurora-proxy-kit PgBouncer engine host agent (apk-host): host/apk_host.py in the kit.

Shipped in the packages object and installed only with the SHA-256 the user data pins. Standard library only.

  apk-host configure <templates>  the fleet's files, laid out from the deploy-time values the user data exports
  apk-host auth-file <out> <server-secret-arn> <consumer-secret-arn>...
                                  PgBouncer's auth file (0600): each consumer as the SCRAM verifier the role
                                  bootstrap sets on Aurora too, the read-only listener's server role with its
                                  password; no password passes through a command line or the shell
  apk-host tls <arn> <dir>        the listeners' certificate, key and CA from a secret
  apk-host s3-get <bucket> <key> <file>
  apk-host serve                  the load balancer's health endpoint, the CloudWatch metrics exporter and the
                                  read-only routing, as a service

The kit's constants (ports, health paths, metrics, paths) are in kit.json beside the fleet's files, which the
bootstrap writes from the kit's model (lib/model/pgbouncer-host-kit.ts).
"""
import base64
import hashlib
import hmac
import json
import os
import pwd
import re
import socket
import struct
import sys
import threading
import time
import unicodedata
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from apk_aws import aws, s3_get

# The fleet's configuration directory (FLEET_PATHS.dir); kit.json in it holds the rest.
ETC = "/etc/pgbouncer"
# The Unix user PgBouncer and `serve` run as: it owns the private files and the route files.
OS_USER = "pgbouncer"
_KIT = {}


def kit():
    if not _KIT:
        with open(ETC + "/kit.json") as f:
            _KIT.update(json.load(f))
    return _KIT


def secret(arn):
    body = json.dumps({"SecretId": arn}).encode()
    target = {"X-Amz-Target": "secretsmanager.GetSecretValue", "Content-Type": "application/x-amz-json-1.1"}
    return json.loads(aws("POST", "secretsmanager", "secretsmanager", "/", body, target))["SecretString"]


def verifier(user, password, iterations=4096):
    # The salt comes from the secret itself, so the role bootstrap (which sets the same verifier on
    # Aurora) and every host compute the same verifier without sharing state; SCRAM pass-through needs that.
    password = unicodedata.normalize("NFKC", password).encode()
    salt = hmac.new(password, kit()["saltContext"].encode() + user.encode(), hashlib.sha256).digest()[:16]
    salted = hashlib.pbkdf2_hmac("sha256", password, salt, iterations)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()

    def b64(b):
        return base64.b64encode(b).decode()

    return "SCRAM-SHA-256$" + str(iterations) + ":" + b64(salt) + "$" + b64(stored_key) + ":" + b64(server_key)


def quoted(value):
    if "\n" in value or "\r" in value:
        raise ValueError("auth file entries cannot contain line breaks")
    return '"' + value.replace('"', '""') + '"'


def owner():
    user = pwd.getpwnam(OS_USER)
    return user.pw_uid, user.pw_gid


def write_file(path, text, mode=0o644, owned=False):
    # Written beside, then renamed: PgBouncer never reads half a file, and the mode is set before the content lands.
    tmp = path + ".tmp"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(tmp, mode)
    if owned:
        os.chown(tmp, *owner())
    os.replace(tmp, path)


def write_private(path, text):
    write_file(path, text, 0o600, owned=True)


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


# The fleet's layout. Computed here, on the host, and only here: the Terraform module's values are known only
# at apply, so no synth-time table could hold them, and the kit's model (planFleetProcesses) is tested against
# this very function, fleet for fleet.


def plan(env):
    """[(listener short name, [(process name, target, server host, peer id, pool size, min pool size)])] of a host."""
    k = kit()
    hosts, vcpus, max_connections = int(env["HOSTS"]), int(env["VCPUS"]), int(env["MAX_CONNECTIONS"])
    readers = env["READER_ENDPOINTS"].split()
    sessions = env.get("SESSION_LISTENERS", "").split()
    # A target's budget (poolSizing): a share of max_connections, never into the connections reserved for others.
    budget = min(max_connections * int(env["MAX_CONNECTIONS_PERCENT"]) // 100, max(0, max_connections - k["reservedConnections"]))
    idle = min(max_connections * int(env["MAX_IDLE_CONNECTIONS_PERCENT"]) // 100, budget)
    session = budget * int(env["SESSION_MAX_CONNECTIONS_PERCENT"]) // 100
    # Read-only: for each reader, max(1, vCPUs / readers) processes pooling for that reader alone.
    per_reader = max(1, vcpus // len(readers))
    layout = []
    for listener in k["listeners"]:
        short, writer = listener["short"], listener["role"] == "READ_WRITE"
        if listener["session"]:
            if short not in sessions:
                continue
            pool, floor = session, 0
        else:
            shared = any(other["session"] and other["role"] == listener["role"] and other["short"] in sessions for other in k["listeners"])
            pool = budget - session if shared else budget
            floor = min(idle, pool)
        per = vcpus if writer else per_reader
        targets = [("writer", env["CLUSTER_ENDPOINT"])] if writer else [("reader" + str(i), r) for i, r in enumerate(readers, 1)]
        processes, peer = [], 0
        for target, host in targets:
            for _ in range(per):
                peer += 1
                processes.append((short + "-" + str(peer), target, host, peer, pool // (hosts * per), floor // (hosts * per)))
        layout.append((short, processes))
    return layout


def filled(text, values):
    for token, value in values.items():
        text = text.replace(token, str(value))
    return text


def configure(templates, env=None):
    """The fleet's files from the kit's templates (the model's, in <templates>) and the fleet's values."""
    env = os.environ if env is None else env
    k = kit()
    tokens = k["tokens"]
    with open(os.path.join(templates, "common.ini.in")) as f:
        common = f.read()
    # Keepalives below the NLB's idle timeout (fleetKeepalive): probe a quiet client before the NLB forgets it.
    tcp_idle = int(env["TCP_IDLE_TIMEOUT_SECONDS"])
    write_file(k["paths"]["commonIni"], filled(common, {
        tokens["maxClientConnections"]: env["MAX_CLIENT_CONNECTIONS"],
        tokens["borrowTimeoutSeconds"]: env["BORROW_TIMEOUT_SECONDS"],
        tokens["keepIdleSeconds"]: min(tcp_idle // 2, k["keepaliveMaxIdleSeconds"]),
        tokens["clientIdleTimeoutSeconds"]: tcp_idle,
    }))
    deploy = {token: env[variable] for token, variable in k["deployTokens"].items()}
    routes = k["paths"]["routesDir"]
    os.makedirs(routes, exist_ok=True)
    os.chown(routes, *owner())
    names = []
    for short, processes in plan(env):
        with open(os.path.join(templates, short + ".ini.in")) as f:
            template = f.read()
        peers = ["[peers]"]
        for name, target, host, peer, pool, floor in processes:
            values = dict(deploy, **{tokens["name"]: name, tokens["target"]: target, tokens["serverHost"]: host, tokens["peerId"]: peer, tokens["poolSize"]: pool, tokens["minPoolSize"]: floor})
            write_file(ETC + "/" + name + ".ini", filled(template, values))
            if target != "writer":
                # A read-only process's pool is in its route file, the PgBouncer user's: serve re-points it.
                with open(os.path.join(templates, "route.ini.in")) as f:
                    write_file(routes + "/" + name + ".ini", filled(f.read(), values), owned=True)
            peers.append(str(peer) + " = host=" + k["paths"]["runDir"] + "/" + name + " port=" + str(k["ports"][short]))
            names.append(name)
        write_file(ETC + "/" + short + "-peers.ini", "\n".join(peers) + "\n")
    write_file(k["paths"]["processes"], " ".join(names) + "\n")
    write_file(k["paths"]["fleetName"], env["FLEET_NAME"] + "\n")


# `serve`: the load balancer's health endpoint and the CloudWatch metrics exporter, beside the PgBouncer processes.
# Both read PgBouncer through each process's admin console on its Unix socket, as the user `pgbouncer`, which
# PgBouncer admits without a password when the client runs as PgBouncer's own Unix user (PgBouncer usage, "Admin
# console"); no password of the console exists on the host. Why the health verdict takes the evidence it takes:
# lib/model/pgbouncer-host-serve.ts.


def processes():
    with open(kit()["paths"]["processes"]) as f:
        return f.read().split()


def admin(name, command):
    """Rows of an admin console SHOW command: the PostgreSQL protocol on the process's Unix socket."""
    path = kit()["paths"]["runDir"] + "/" + name + "/.s.PGSQL." + str(kit()["ports"][name[:2]])
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(2)
    f = s.makefile("rb")
    try:
        s.connect(path)
        params = b"user\0pgbouncer\0database\0pgbouncer\0\0"
        s.sendall(struct.pack("!ii", len(params) + 8, 196608) + params)

        def message():
            kind = f.read(1)
            if not kind:
                raise OSError("admin console closed the connection")
            body = f.read(struct.unpack("!i", f.read(4))[0] - 4)
            if kind == b"E":
                raise OSError("admin console: " + " ".join(p[1:].decode() for p in body.split(b"\0") if p[:1] == b"M"))
            if kind == b"R" and body[:4] != b"\0\0\0\0":
                raise OSError("admin console asks for a password: run as PgBouncer's user")
            return kind, body

        while message()[0] != b"Z":
            pass
        s.sendall(b"Q" + struct.pack("!i", len(command) + 5) + command.encode() + b"\0")
        columns, rows = [], []
        while True:
            kind, body = message()
            if kind == b"T":
                at, columns = 2, []
                for _ in range(struct.unpack("!h", body[:2])[0]):
                    end = body.index(b"\0", at)
                    columns.append(body[at:end].decode())
                    at = end + 19
            elif kind == b"D":
                at, row = 2, []
                for _ in range(struct.unpack("!h", body[:2])[0]):
                    n = struct.unpack("!i", body[at:at + 4])[0]
                    row.append(None if n < 0 else body[at + 4:at + 4 + n].decode())
                    at += 4 + max(n, 0)
                rows.append(dict(zip(columns, row)))
            elif kind == b"Z":
                return rows
    finally:
        # Both: the descriptor is released once the socket and its file are closed.
        f.close()
        s.close()


def servers(name):
    """database -> (host, port) of the process's pools; the console's own database has no host."""
    return {d["name"]: (d["host"], int(d["port"])) for d in admin(name, "SHOW DATABASES") if d.get("host")}


def reachable(target):
    try:
        socket.create_connection(target, kit()["health"]["connectTimeoutSeconds"]).close()
        return None
    except OSError as e:
        return "server " + target[0] + ":" + str(target[1]) + " unreachable: " + str(e)


# (process, database) -> (when, total_query_count) at the previous verdict.
QUERIES = {}


def health(listener):
    problems, targets, alive, now = [], set(), set(), time.monotonic()
    names = [n for n in processes() if n[:2] == listener]
    if not names:
        problems.append("no processes of the listener")
    for name in names:
        try:
            hosts = servers(name)
            targets.update(hosts.values())
            # A server whose pools completed queries since a recent previous verdict answered: no connect needed.
            for row in admin(name, "SHOW STATS"):
                db = row["database"]
                if db in hosts:
                    at, was = QUERIES.get((name, db), (0, 1e18))
                    QUERIES[name, db] = now, int(row["total_query_count"])
                    if was < QUERIES[name, db][1] and now - at <= kit()["health"]["evidenceSeconds"]:
                        alive.add(hosts[db])
        except (OSError, ValueError) as e:
            problems.append(name + ": " + str(e))
    # A connect only to the others: each is a "connection received" line in Aurora's log (log_connections).
    with ThreadPoolExecutor(16) as pool:
        problems.extend(p for p in pool.map(reachable, sorted(targets - alive)) if p)
    return problems


class Health(BaseHTTPRequestHandler):
    cache, lock = {}, threading.Lock()

    def do_GET(self):
        listener = kit()["healthPaths"].get(self.path)
        if listener is None:
            self.answer(404, "paths: " + " ".join(kit()["healthPaths"]))
            return
        with Health.lock:
            at, problems = Health.cache.get(listener, (0, None))
            if time.monotonic() - at > kit()["health"]["cacheSeconds"]:
                problems = health(listener)
                Health.cache[listener] = (time.monotonic(), problems)
        self.answer(503 if problems else 200, "\n".join(problems) if problems else "ok")

    def answer(self, status, text):
        body = (text + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def sample():
    """(listener, target) -> metric -> value for gauges, and (process, database, metric) -> counter total."""
    gauges, totals = {}, {}
    for name in processes():
        try:
            hosts = servers(name)
            result = {c: admin(name, c) for c in ("SHOW POOLS", "SHOW STATS")}
        except (OSError, ValueError) as e:
            sys.stderr.write("metrics: " + name + ": " + str(e) + "\n")
            continue
        for metric, unit, command, columns, combine in kit()["metrics"]:
            for row in result[command]:
                if row["database"] not in hosts:
                    continue
                key = (kit()["metricListeners"][name[:2]], hosts[row["database"]][0].split(".")[0])
                value = sum(float(row[c] or 0) / (1e6 if c.endswith("_us") else 1) for c in columns)
                if combine == "delta":
                    totals[(name, row["database"], metric, key)] = value
                    continue
                values = gauges.setdefault(key, {})
                values[metric] = max(values.get(metric, 0), value) if combine == "max" else values.get(metric, 0) + value
    return gauges, totals


def increase(previous, totals):
    """(key, metric) -> what the counters of its pools counted since the previous sample."""
    deltas = {}
    for (name, database, metric, key), total in totals.items():
        before = previous.get((name, database, metric, key), 0)
        # A restarted process counts from 0 again: what it counted since is the increase.
        deltas[(key, metric)] = deltas.get((key, metric), 0) + (total - before if total >= before else total)
    return deltas


def put_metric_data(fleet, data, stamp):
    form = {"Action": "PutMetricData", "Version": "2010-08-01", "Namespace": kit()["metricsNamespace"]}
    units = {m[0]: m[1] for m in kit()["metrics"]}
    for i, ((listener, target), metric, value) in enumerate(data, 1):
        p = "MetricData.member." + str(i) + "."
        form.update({p + "MetricName": metric, p + "Unit": units[metric], p + "Value": repr(float(value)), p + "Timestamp": stamp})
        for j, (k, v) in enumerate((("Fleet", fleet), ("Listener", listener), ("Target", target)), 1):
            form.update({p + "Dimensions.member." + str(j) + ".Name": k, p + "Dimensions.member." + str(j) + ".Value": v})
    body = urllib.parse.urlencode(form).encode()
    aws("POST", "monitoring", "monitoring", "/", body, {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"})


def export(fleet, period):
    previous = None
    while True:
        time.sleep(period - time.time() % period)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        try:
            gauges, totals = sample()
            data = [(key, metric, value) for key, values in sorted(gauges.items()) for metric, value in sorted(values.items())]
            if previous is not None:
                data += [(key, metric, value) for (key, metric), value in sorted(increase(previous, totals).items())]
            # A process that did not answer keeps its last totals, so its next answer is not counted twice.
            previous = dict(previous or {})
            previous.update(totals)
            if data:
                put_metric_data(fleet, data, stamp)
        except Exception as e:
            sys.stderr.write("metrics: " + str(e) + "\n")


# The read-only routing (READ_ONLY_ROUTING in lib/model/pgbouncer-fleet.ts), a thread of `serve`: every interval it
# resolves the cluster endpoint and each read-only process's home reader, as PgBouncer and the clients do (the
# host's resolver, Aurora's 5-second TTL). While a home reader's address is the cluster endpoint's (it was
# promoted), the process's pool points at the spare, the deploy-time writer's instance endpoint, which Aurora
# brings back as a reader; once the home is a reader again, back to it. Each change rewrites the process's route
# file and RELOADs that process: PgBouncer closes the old pool's server connections as they go idle. A name that
# does not resolve changes nothing (the guard on every server connection still keeps reads off a writer).

ROUTE_HEADER = re.compile(r"^; \S+ \(\S+\) home=(\S+) spare=(\S+) writer=(\S+)$", re.M)
ROUTE_HOST = re.compile(r"^(\S+ = host=)(\S+)( )", re.M)


def addresses(name):
    """The addresses a name resolves to now, or None when it does not resolve."""
    try:
        return {a[4][0] for a in socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)}
    except OSError:
        return None


def routed_host(home, spare, writer, resolve):
    """Where a read-only pool belongs: its home reader, or the spare while home is the writer; None: unknown."""
    at_home, at_writer = resolve(home), resolve(writer)
    if not at_home or not at_writer:
        return None
    return spare if at_home & at_writer else home


def route_once(resolve=addresses):
    changes = []
    read_only = {listener["short"] for listener in kit()["listeners"] if listener["role"] == "READ_ONLY"}
    for name in processes():
        if name[:2] not in read_only:
            continue
        path = kit()["paths"]["routesDir"] + "/" + name + ".ini"
        with open(path) as f:
            text = f.read()
        header, pool = ROUTE_HEADER.search(text), ROUTE_HOST.search(text)
        if not header or not pool:
            raise ValueError(path + ": not a route file of this kit")
        want = routed_host(*header.groups(), resolve)
        if want is None or want == pool.group(2):
            continue
        with open(path + ".tmp", "w") as f:
            f.write(text[:pool.start(2)] + want + text[pool.end(2):])
        os.replace(path + ".tmp", path)
        admin(name, "RELOAD")
        changes.append({"event": "read-only-route", "process": name, "from": pool.group(2), "to": want})
    return changes


def route(interval):
    while True:
        try:
            for change in route_once():
                print(json.dumps(change), flush=True)
        except Exception as e:
            sys.stderr.write("route: " + str(e) + "\n")
        time.sleep(interval)


def serve():
    with open(kit()["paths"]["fleetName"]) as f:
        fleet = f.read().strip()
    # The exporter's period: CloudWatch's minute, unless the unit's environment sets another (an operator's drop-in).
    period = float(os.environ.get("APK_METRICS_PERIOD", kit()["metricsPeriodSeconds"]))
    threading.Thread(target=export, args=(fleet, period), daemon=True).start()
    threading.Thread(target=route, args=(kit()["routeIntervalSeconds"],), daemon=True).start()
    ThreadingHTTPServer(("", kit()["healthPort"]), Health).serve_forever()


def main(argv):
    if argv[:1] == ["configure"] and len(argv) == 2:
        configure(argv[1])
    elif argv[:1] == ["auth-file"] and len(argv) >= 3:
        auth_file(argv[1], argv[2], argv[3:])
    elif argv[:1] == ["tls"] and len(argv) == 3:
        tls(argv[1], argv[2])
    elif argv[:1] == ["s3-get"] and len(argv) == 4:
        s3_get(argv[1], argv[2], argv[3])
    elif argv == ["serve"]:
        serve()
    else:
        sys.stderr.write("usage: apk-host configure <templates> | auth-file <out> <server-secret-arn> <consumer-secret-arn>... | tls <arn> <dir> | s3-get <bucket> <key> <file> | serve\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
