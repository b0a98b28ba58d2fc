/**
 * The tiny schema the consumers use, and the write path's "create on first
 * use" step. Kept as plain SQL so the local rehearsal and the docs can show
 * exactly what runs.
 */
import type { ClientBase } from 'pg';

export const TABLE_NAME = 'kit_events';

export const CREATE_TABLE_SQL = `CREATE TABLE IF NOT EXISTS ${TABLE_NAME} (
  id bigint PRIMARY KEY,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
)`;

/** NULL when the table does not exist (in the current search_path). */
export const TABLE_EXISTS_SQL = `SELECT to_regclass('${TABLE_NAME}') IS NOT NULL AS exists`;

export const INSERT_EVENT_SQL = `INSERT INTO ${TABLE_NAME} (id, payload) VALUES ($1, $2::jsonb)
ON CONFLICT (id) DO NOTHING
RETURNING id`;

/**
 * Served-by facts and the row in ONE statement: through a proxy, separate
 * statements may run on different backends (even different readers), so only
 * a single statement guarantees `served_by` describes the server that
 * produced the row. host() drops the "/32" that inet::text would append.
 */
export const SELECT_EVENT_WITH_SERVER_SQL = `SELECT host(inet_server_addr()) AS address,
  inet_server_port() AS port,
  pg_is_in_recovery() AS in_recovery,
  pg_backend_pid() AS backend_pid,
  e.id AS event_id, e.payload AS event_payload, e.created_at AS event_created_at
FROM (SELECT 1) AS one
LEFT JOIN ${TABLE_NAME} AS e ON e.id = $1`;

/** Errors CREATE TABLE IF NOT EXISTS raises when another container creates the table at the same moment. */
const CONCURRENT_CREATE_SQLSTATES = new Set(['23505', '42P07']);

let ensured = false;

/**
 * Creates kit_events if missing, once per container. The existence check
 * comes first because CREATE ... IF NOT EXISTS still needs CREATE privilege
 * on the schema, which a least-privilege application role may not have once
 * the table exists.
 */
export async function ensureSchema(client: ClientBase): Promise<void> {
  if (ensured) return;
  const { rows } = await client.query<{ exists: boolean }>(TABLE_EXISTS_SQL);
  if (rows[0]?.exists !== true) {
    try {
      await client.query(CREATE_TABLE_SQL);
    } catch (err) {
      // Two cold starts racing on an empty database: the loser sees a
      // catalog unique violation; the table exists either way.
      if (!CONCURRENT_CREATE_SQLSTATES.has((err as { code?: string }).code ?? '')) throw err;
    }
  }
  ensured = true;
}

/** Forces the next write to re-check the schema (used after 42P01 and by tests). */
export function resetSchemaState(): void {
  ensured = false;
}
