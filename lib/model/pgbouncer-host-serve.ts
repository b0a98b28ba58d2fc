/**
 * The PgBouncer engine's host agent, `apk-host serve` (a systemd unit of its own, as the PgBouncer user):
 * the load balancer's health endpoint and the CloudWatch metrics exporter, in one standard-library
 * Python process beside the PgBouncer processes. Both read PgBouncer through each process's admin
 * console on its Unix socket, as the user `pgbouncer`, which PgBouncer admits without a password when
 * the client runs as PgBouncer's own Unix user (PgBouncer usage, "Admin console"); no password of the
 * console exists on the host.
 *
 * Health: `GET <path>` of a listener answers 200 only while every process of that listener answers on
 * its admin socket AND every server its pools use has shown it is alive, else 503 with the reasons
 * (SHOW DATABASES gives each pool's host and port, as PgBouncer itself resolves them, re-read after a
 * RELOAD). A server has shown it is alive when its pools completed queries since the previous verdict
 * (SHOW STATS total_query_count grew, within HEALTH_EVIDENCE_SECONDS): it answered, which says more
 * than a connect. Otherwise (an idle pool, a server that stopped answering) the verdict connects to it
 * over TCP. Why not pool state alone (SHOW SERVERS / SHOW POOLS): it only describes connections already
 * open; a pool with none (min_pool_size 0, or all closed after server_lifetime) says nothing, and an
 * open connection to a server that vanished stays `idle` until server_check_delay or a keepalive finds
 * it. A connect tests the path now (routes, security groups, the instance listening) but costs the
 * server a fork and, as the cluster sets log_connections=1, a "connection received" log line (PostgreSQL
 * logs it at accept, before any startup packet): hence connects only where queries did not answer, so a
 * busy fleet's checks make no log lines and an idle one's a few per interval (results are kept
 * HEALTH_CACHE_SECONDS, so the load balancer's nodes, which each check every interval, share them).
 * Not covered: a server that accepts connections but refuses logins (the dashboard's server connections
 * show that).
 *
 * Metrics: every period, SHOW DATABASES, SHOW POOLS and SHOW STATS of every process, combined per
 * (Listener, Target) by POOLER_METRICS (pgbouncer-metrics.ts; counters as deltas since the previous
 * sample, the first sample only sets the baseline), published with one PutMetricData (Query protocol)
 * signed with SigV4 through the monitoring interface endpoint. With APK_AWS_STANDIN, each request's
 * form body is written to <standin>/cloudwatch/ instead (the rehearsal's stand-in).
 */
import { FLEET_LISTENER_SHORT, FLEET_LISTENERS, FLEET_PATHS, FLEET_PORTS, type FleetListener } from './pgbouncer-fleet';
import { POOLER_METRIC_LISTENERS, POOLER_METRICS, POOLER_METRICS_NAMESPACE, POOLER_METRICS_PERIOD_SECONDS } from './pgbouncer-metrics';

/** The health endpoint's port on each host (the load balancer's health checks; the hosts' security group admits it). */
export const POOLER_HEALTH_PORT = 6480;
/** The path of each listener's health (the NLB target group of that listener checks it). */
export const POOLER_HEALTH_PATHS: Readonly<Record<FleetListener, string>> = { readWrite: '/read-write', readOnly: '/read-only', readWriteSession: '/read-write-session', readOnlySession: '/read-only-session' };

/** A Python dict literal of each listener's short name to a value. */
function byShort(value: (l: FleetListener) => string | number): string {
  return `{${FLEET_LISTENERS.map((l) => `${JSON.stringify(FLEET_LISTENER_SHORT[l])}: ${JSON.stringify(value(l))}`).join(', ')}}`;
}
/** The target groups' health checks, the same in both flavours. */
export const POOLER_HEALTH_CHECK = { intervalSeconds: 10, timeoutSeconds: 5, healthyThreshold: 2, unhealthyThreshold: 2 } as const;
/** How long a health result is reused, and the timeout of each server connect (both under the check's timeout). */
export const HEALTH_CACHE_SECONDS = 2;
export const HEALTH_CONNECT_TIMEOUT_SECONDS = 2;
/**
 * How recent the previous verdict's query totals must be for their growth to stand for a connect: two
 * check intervals, so a server that stops answering is connected to within one more interval.
 */
export const HEALTH_EVIDENCE_SECONDS = 2 * POOLER_HEALTH_CHECK.intervalSeconds;
/** The fleet's name for the Fleet dimension, written by the bootstrap (a placeholder's value). */
export const FLEET_NAME_FILE = `${FLEET_PATHS.dir}/fleet-name`;

/** The table the exporter follows, as it reads it: metric, unit, command, columns, combine. */
function metricTable(): string {
  return JSON.stringify(POOLER_METRICS.map((m) => [m.metricName, m.unit, m.source.command, m.source.columns, m.source.combine]));
}

/** The Python of `serve`, appended to the host agent (it uses the agent's aws() and ROOT-free helpers). */
export const HOST_SERVE_SOURCE = String.raw`
import socket, struct, threading, time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.environ.get("APK_ROOT", "")
PORTS = ${byShort((l) => FLEET_PORTS[l])}
PATHS = {${FLEET_LISTENERS.map((l) => `"${POOLER_HEALTH_PATHS[l]}": "${FLEET_LISTENER_SHORT[l]}"`).join(', ')}}
LISTENER = ${byShort((l) => POOLER_METRIC_LISTENERS[l])}
METRICS = json.loads('${metricTable()}')


def processes():
    with open(ROOT + "/${FLEET_PATHS.dir}/processes") as f:
        return f.read().split()


def admin(name, command):
    """Rows of an admin console SHOW command: the PostgreSQL protocol on the process's Unix socket."""
    path = ROOT + "/${FLEET_PATHS.runDir}/" + name + "/.s.PGSQL." + str(PORTS[name[:2]])
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
        socket.create_connection(target, ${HEALTH_CONNECT_TIMEOUT_SECONDS}).close()
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
                    if was < QUERIES[name, db][1] and now - at <= ${HEALTH_EVIDENCE_SECONDS}:
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
        listener = PATHS.get(self.path)
        if listener is None:
            self.answer(404, "paths: " + " ".join(PATHS))
            return
        with Health.lock:
            at, problems = Health.cache.get(listener, (0, None))
            if time.monotonic() - at > ${HEALTH_CACHE_SECONDS}:
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
        for metric, unit, command, columns, combine in METRICS:
            for row in result[command]:
                if row["database"] not in hosts:
                    continue
                key = (LISTENER[name[:2]], hosts[row["database"]][0].split(".")[0])
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
    form = {"Action": "PutMetricData", "Version": "2010-08-01", "Namespace": "${POOLER_METRICS_NAMESPACE}"}
    units = {m[0]: m[1] for m in METRICS}
    for i, ((listener, target), metric, value) in enumerate(data, 1):
        p = "MetricData.member." + str(i) + "."
        form.update({p + "MetricName": metric, p + "Unit": units[metric], p + "Value": repr(float(value)), p + "Timestamp": stamp})
        for j, (k, v) in enumerate((("Fleet", fleet), ("Listener", listener), ("Target", target)), 1):
            form.update({p + "Dimensions.member." + str(j) + ".Name": k, p + "Dimensions.member." + str(j) + ".Value": v})
    body = urllib.parse.urlencode(form).encode()
    standin = os.environ.get("APK_AWS_STANDIN")
    if standin:
        out = os.path.join(standin, "cloudwatch", "%.3f.txt" % time.time())
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out + ".tmp", "wb") as f:
            f.write(body)
        os.replace(out + ".tmp", out)
        return
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


def serve():
    with open(ROOT + "/${FLEET_NAME_FILE}") as f:
        fleet = f.read().strip()
    period = float(os.environ.get("APK_METRICS_PERIOD", "${POOLER_METRICS_PERIOD_SECONDS}"))
    threading.Thread(target=export, args=(fleet, period), daemon=True).start()
    # Read-only pools off a promoted reader (pgbouncer-host-route.ts).
    threading.Thread(target=route, args=(ROUTE_INTERVAL_SECONDS,), daemon=True).start()
    ThreadingHTTPServer(("", ${POOLER_HEALTH_PORT}), Health).serve_forever()
`;
