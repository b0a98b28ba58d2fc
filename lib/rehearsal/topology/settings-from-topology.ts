/**
 * The rehearsal settings a deployed topology fixes, as far as today's RehearsalSettings goes: one
 * streaming replica per reader, the proxy's pool settings (PgBouncer is sized from them), and the
 * cluster's port. The caller merges them over its own settings; everything else (addresses, work dir,
 * max_connections) stays the rehearsal's.
 */
import { RehearsalConfigError } from '../errors';
import type { RehearsalSettings } from '../settings-types';
import type { DeployedTopology } from './types';

/** The engines the rehearsal's PostgreSQL 15 stands in for. */
const POSTGRES_ENGINES: ReadonlyArray<string> = ['aurora-postgresql', 'postgres'];

export type TopologySettings = Required<Pick<RehearsalSettings, 'replicas' | 'pool' | 'port'>>;

export function settingsFromTopology(t: DeployedTopology): TopologySettings {
  if (!POSTGRES_ENGINES.includes(t.cluster.engine)) {
    throw new RehearsalConfigError([`cluster ${t.cluster.id} runs ${t.cluster.engine}: the rehearsal runs PostgreSQL, so it rehearses ${POSTGRES_ENGINES.join(' or ')} clusters only`]);
  }
  const { maxConnectionsPercent, maxIdleConnectionsPercent, connectionBorrowTimeoutSeconds } = t.proxy.pool;
  return {
    replicas: t.cluster.readers.length,
    pool: { maxConnectionsPercent, maxIdleConnectionsPercent, connectionBorrowTimeoutSeconds },
    port: t.cluster.port,
  };
}
