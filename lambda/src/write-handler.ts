/**
 * Write consumer: served through the proxy's READ_WRITE endpoint (the Aurora
 * writer). The insert is idempotent (ON CONFLICT DO NOTHING), which is what
 * makes retrying it after a dropped connection safe.
 */
import type { Context } from 'aws-lambda';
import type { ClientBase } from 'pg';
import { getConfigForRole } from './config';
import { EndpointRole } from './environment';
import { withClient, type ConnectionInfo } from './db';
import { EndpointRoleError, sqlStateOf } from './errors';
import { instrument, remainingTime, validateAtColdStart } from './invocation';
import { ensureSchema, INSERT_EVENT_SQL, resetSchemaState } from './schema';
import { assertWritable, queryServedBy, type ServedBy } from './server-info';
import { parseWriteEvent, type WriteEvent } from './validation';

const ROLE = EndpointRole.READ_WRITE;

export interface WriteResponse {
  readonly id: number;
  /**
   * False when the id already existed. After a retried attempt this can also
   * be false for a row the lost first attempt did commit.
   */
  readonly inserted: boolean;
  readonly served_by: ServedBy;
  readonly connection: ConnectionInfo;
  readonly duration_ms: number;
}

async function insertEvent(client: ClientBase, event: WriteEvent): Promise<{ served_by: ServedBy; inserted: boolean }> {
  const served_by = await queryServedBy(client);
  assertWritable(served_by);
  await ensureSchema(client);
  const params = [event.id, JSON.stringify(event.payload)];
  try {
    const { rowCount } = await client.query(INSERT_EVENT_SQL, params);
    return { served_by, inserted: rowCount === 1 };
  } catch (err) {
    switch (sqlStateOf(err)) {
      case '25006':
        // read_only_sql_transaction: the server became a reader after the
        // check above (failover in progress). Same diagnosis as assertWritable.
        throw new EndpointRoleError(ROLE, `refusing to write: the server rejected the insert as read-only (${(err as Error).message})`);
      case '42P01': {
        // The table vanished since this container created it (e.g. dropped by
        // an operator): recreate once and insert again.
        resetSchemaState();
        await ensureSchema(client);
        const { rowCount } = await client.query(INSERT_EVENT_SQL, params);
        return { served_by, inserted: rowCount === 1 };
      }
      default:
        throw err;
    }
  }
}

// Inside Lambda, a miswired environment fails the init phase (see invocation.ts).
validateAtColdStart(ROLE);

export const handler = async (event: unknown, context?: Context): Promise<WriteResponse> =>
  instrument('write', context, async () => {
    const config = getConfigForRole(ROLE);
    const parsed = parseWriteEvent(event);
    const { result, connection } = await withClient(config, (client) => insertEvent(client, parsed), {
      remainingTimeMs: remainingTime(context),
    });
    return { id: parsed.id, inserted: result.inserted, served_by: result.served_by, connection };
  });
