/**
 * The host agent's read-only routing (READ_ONLY_ROUTING in pgbouncer-fleet.ts), a thread of `apk-host serve`:
 * every interval it resolves the cluster endpoint and each read-only process's home reader, as PgBouncer and
 * the clients do (the host's resolver, Aurora's 5-second TTL). While a home reader's address is the cluster
 * endpoint's (it was promoted), the process's pool points at the spare, the deploy-time writer's instance
 * endpoint, which Aurora brings back as a reader; once the home is a reader again, back to it. Each change
 * rewrites the process's route file (its first line names home, spare and the cluster endpoint) and RELOADs
 * that process through its admin console: PgBouncer closes the old pool's server connections as they go idle.
 * A name that does not resolve changes nothing (the guard on every server connection still keeps reads off a
 * writer).
 */
import { FLEET_LISTENER_SHORT, FLEET_PATHS, READ_ONLY_ROUTING } from './pgbouncer-fleet';

/** The Python of the routing thread, appended to the host agent (it uses serve's processes() and admin()). */
export const HOST_ROUTE_SOURCE = String.raw`
import re

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
    for name in processes():
        if name[:2] not in ("${FLEET_LISTENER_SHORT.readOnly}", "${FLEET_LISTENER_SHORT.readOnlySession}"):
            continue
        path = ROOT + "/${FLEET_PATHS.routesDir}/" + name + ".ini"
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


ROUTE_INTERVAL_SECONDS = ${READ_ONLY_ROUTING.intervalSeconds}
`;
