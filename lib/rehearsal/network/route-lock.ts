/**
 * A lock across processes around the shared `unreachable 198.18.0.0/15` route: a setup adds it (when
 * missing) and makes its first namespace, and a teardown removes it when no kit namespace is left. Without
 * the lock a teardown could see no namespace, a setup then find the route still there and make one, and
 * the teardown remove the route under it.
 *
 * See withFileLock for why a holder that dies never leaves it behind.
 */
import { withFileLock } from '../../private/file-lock';

/** Where the lock lives: the machine's lock directory, since the route is the machine's. */
export const ROUTE_LOCK_FILE = '/run/lock/aurora-proxy-kit-network.lock';

/** Runs `fn` holding the lock; waits up to `timeoutMs` for another holder. */
export async function withRouteLock<T>(fn: () => Promise<T>, file = ROUTE_LOCK_FILE, timeoutMs = 60_000): Promise<T> {
  return withFileLock(
    file,
    timeoutMs,
    () => `the network lock ${file} was held by another rehearsal's network setup or teardown for more than ${timeoutMs} ms: wait for it, or find its holder with \`fuser ${file}\``,
    fn,
  );
}
