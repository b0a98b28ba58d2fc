/**
 * Which server answered: the evidence that the READ_ONLY endpoint reaches a
 * replica and the READ_WRITE endpoint the writer.
 */
import type { ClientBase } from 'pg';
import { EndpointRoleError } from './errors';

export interface ServedBy {
  /** Server address as seen by the session (null over a Unix socket). */
  readonly address: string | null;
  readonly port: number | null;
  /** True on a hot standby / Aurora reader. */
  readonly in_recovery: boolean;
  /**
   * PostgreSQL backend process id. Through RDS Proxy this is the pooled
   * database connection, which can change between transactions even on a
   * reused client connection; `connection.reused` is the client-side truth.
   */
  readonly backend_pid: number;
}

export const SERVED_BY_SQL = `SELECT host(inet_server_addr()) AS address,
  inet_server_port() AS port,
  pg_is_in_recovery() AS in_recovery,
  pg_backend_pid() AS backend_pid`;

interface ServedByRow {
  address: string | null;
  port: number | null;
  in_recovery: boolean;
  backend_pid: number;
}

export function toServedBy(row: ServedByRow): ServedBy {
  return { address: row.address, port: row.port, in_recovery: row.in_recovery, backend_pid: row.backend_pid };
}

export async function queryServedBy(client: ClientBase): Promise<ServedBy> {
  const { rows } = await client.query<ServedByRow>(SERVED_BY_SQL);
  const row = rows[0];
  if (row === undefined) throw new Error('served-by query returned no row');
  return toServedBy(row);
}

/**
 * Refuses to write to a server in recovery. Reaching one through the
 * READ_WRITE endpoint means the function is wired to a reader endpoint (or
 * a failover is in progress); either way the write must fail loudly.
 */
export function assertWritable(servedBy: ServedBy): void {
  if (servedBy.in_recovery) {
    throw new EndpointRoleError(
      'READ_WRITE',
      `refusing to write: server ${servedBy.address ?? '(socket)'}:${servedBy.port ?? '?'} is in recovery (read-only replica); DB_HOST must be the proxy's READ_WRITE endpoint`,
    );
  }
}
