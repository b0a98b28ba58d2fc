/**
 * Writer failover, as Aurora does it: the writer dies (SIGKILL to its process group), the most
 * up-to-date live replica restarts as the writer (Aurora restarts its failover target, so no session of
 * the reader outlives the promotion), the other replicas follow it, quorum commit is restored, and the
 * health checker re-points the read/write endpoint.
 */
import { findBinaries } from './binaries';
import { RehearsalOperationError } from './errors';
import { adminTarget, follow, setSynchronous, startPromoted, waitStreaming, type PostgresContext } from './postgres';
import { isOurs, killProcess, stopProcess } from './processes';
import type { RunningRehearsal } from './running';
import { query, waitFor } from './sql';
import type { NodeState } from './state';
import type { FailoverReport } from './types';

interface WalPosition {
  readonly node: NodeState;
  readonly lsn: bigint;
}

/** How much WAL each live replica has received, most first; unreachable ones are left out. */
async function walPositions(ctx: PostgresContext, replicas: ReadonlyArray<NodeState>): Promise<WalPosition[]> {
  const positions = await Promise.all(
    replicas.map(async (n) => {
      try {
        const rows = await query<{ lag: string }>(adminTarget(ctx, n), "SELECT pg_wal_lsn_diff(COALESCE(pg_last_wal_receive_lsn(), '0/0'), '0/0')::text AS lag", undefined, 2000);
        return { node: n, lsn: BigInt((rows[0]?.lag ?? '0').split('.')[0] ?? '0') };
      } catch {
        return undefined;
      }
    }),
  );
  const live = positions.filter((p): p is WalPosition => p !== undefined);
  live.sort((a, b) => (a.lsn === b.lsn ? 0 : a.lsn > b.lsn ? -1 : 1));
  return live;
}

/** Kills the writer, promotes a replica and waits until the read/write endpoint points at it. */
export async function failover(run: RunningRehearsal, timeoutMs: number): Promise<FailoverReport> {
  const ctx = run.ctx(findBinaries({ comparisonProxies: run.state.settings.comparisonProxies }).postgresBinDir);
  const old = run.writerNode;
  const started = Date.now();
  await killProcess(run.process(old.name));

  const live = await walPositions(ctx, run.replicaNodes.filter((n) => isOurs(run.process(n.name))));
  // The replica that received the most WAL: with quorum commit it holds every acknowledged commit.
  const chosen = live[0]?.node;
  if (chosen === undefined) throw new RehearsalOperationError(`failover: no live replica to promote after killing ${old.name}`);

  const left = await stopProcess(run.process(chosen.name));
  if (left.length > 0) throw new RehearsalOperationError(`failover: ${chosen.name} did not stop to restart as the writer: still running ${left.join(', ')}`);
  await startPromoted(ctx, chosen, (proc) => run.track(proc), timeoutMs);
  const promotedAfterMs = Date.now() - started;
  run.state.writerName = chosen.name;
  run.save();
  // Aurora moves the cluster endpoint's DNS name to the promoted instance.
  run.network.moveClusterEndpoint(chosen.name);

  const followers = live.slice(1).map((p) => p.node);
  await Promise.all(followers.map((f) => follow(ctx, f, chosen)));
  await waitFor(`the read/write endpoint to be re-pointed at ${chosen.name}`, timeoutMs, async () => {
    const h = run.health();
    return h !== undefined && h.readWriteHosts.length === 1 && h.readWriteHosts[0] === chosen.address ? true : undefined;
  }, 50);
  const repointedAfterMs = Date.now() - started;
  if (followers.length > 0) {
    await waitStreaming(ctx, chosen, followers.map((f) => f.name), timeoutMs);
    if (run.state.settings.synchronous) await setSynchronous(ctx, chosen, true);
  }
  return { oldWriter: old.name, newWriter: chosen.name, newWriterAddress: chosen.address, followers: followers.map((f) => f.name), promotedAfterMs, repointedAfterMs };
}
