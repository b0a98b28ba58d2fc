/**
 * Adding a streaming replica while everything runs, as adding an Aurora reader does: pg_basebackup
 * from the writer onto the next address of the block, start it, wait until it streams; then the
 * health checker (which re-reads the node list every round) puts it into the read-only endpoint's
 * host list, and HAProxy gets it through its runtime API. pgpool-II is not told (it keeps its list).
 */
import { findBinaries } from './binaries';
import { RehearsalOperationError } from './errors';
import { haproxyAddServer } from './comparison-proxies';
import { cloneReplica, launchNode, nodeState, waitReady, waitStreaming } from './postgres';
import { stopProcess } from './processes';
import type { RunningRehearsal } from './running';
import { REHEARSAL_MAX_REPLICAS } from './rules';
import { waitFor } from './sql';
import type { AddReplicaReport } from './types';

/** The first replicaN name no node has (a killed replica keeps its name). */
function freeReplicaName(run: RunningRehearsal, count: number): string {
  let name = `replica${count + 1}`;
  for (let i = count + 2; run.state.nodes.some((n) => n.name === name); i++) name = `replica${i}`;
  return name;
}

export async function addReplica(run: RunningRehearsal, timeoutMs: number): Promise<AddReplicaReport> {
  const s = run.state.settings;
  const started = Date.now();
  const left = (): number => Math.max(1000, started + timeoutMs - Date.now());
  const count = run.state.nodes.length - 1;
  if (count >= REHEARSAL_MAX_REPLICAS) throw new RehearsalOperationError(`addReplica: already ${count} replicas, the most the rehearsal (and Aurora) allows is ${REHEARSAL_MAX_REPLICAS}`);
  const address = run.network.addressPlan(count + 1).replicas[count]!;
  const name = freeReplicaName(run, count);
  await run.network.assertFree([{ role: name, address, port: s.port }]);
  const ctx = run.ctx(findBinaries({ comparisonProxies: s.comparisonProxies }).postgresBinDir);
  const writer = run.writerNode;
  const node = nodeState(run.layout, name, address, s.port);
  await cloneReplica(ctx, node, writer, left());
  const proc = run.track(launchNode(ctx, node));
  try {
    await waitReady(ctx, node, proc, left());
    await waitStreaming(ctx, writer, [name], left());
  } catch (err) {
    await stopProcess(proc).catch(() => undefined);
    throw err;
  }
  const streamingAfterMs = Date.now() - started;
  run.state.nodes.push(node);
  run.state = { ...run.state, plan: { ...run.state.plan, replicas: [...run.state.plan.replicas, address] } };
  run.save();

  let inHaproxy = false;
  if (run.hasLive('haproxy')) {
    await haproxyAddServer(run.layout.haproxy.adminSocket, { name, address, port: s.port });
    inHaproxy = true;
  }
  await waitFor(`the health checker to add ${name} to the read-only pool`, left(), async () => {
    const h = run.health();
    return h !== undefined && h.readOnlyHosts.includes(address) ? true : undefined;
  }, 50);
  return { name, address, streamingAfterMs, inReadOnlyPoolAfterMs: Date.now() - started, inHaproxy };
}
