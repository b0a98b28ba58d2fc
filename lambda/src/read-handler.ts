/**
 * Read consumer: served through the proxy's READ_ONLY endpoint (Aurora
 * readers). Reports which server answered so the routing can be verified.
 */
import type { Context } from 'aws-lambda';
import type { ClientBase } from 'pg';
import { getConfigForRole } from './config';
import { EndpointRole } from './environment';
import { withClient, type ConnectionInfo } from './db';
import { sqlStateOf } from './errors';
import { instrument, remainingTime, validateAtColdStart } from './invocation';
import { SELECT_EVENT_WITH_SERVER_SQL } from './schema';
import { queryServedBy, toServedBy, type ServedBy } from './server-info';
import { parseReadEvent } from './validation';

const ROLE = EndpointRole.READ_ONLY;

export interface KitEvent {
  readonly id: number;
  readonly payload: unknown;
  /** ISO-8601 timestamp. */
  readonly created_at: string;
}

export interface ReadResponse {
  readonly served_by: ServedBy;
  readonly event: KitEvent | null;
  readonly connection: ConnectionInfo;
  readonly duration_ms: number;
}

interface EventRow {
  address: string | null;
  port: number | null;
  in_recovery: boolean;
  backend_pid: number;
  event_id: string | null; // bigint arrives as a string from pg
  event_payload: unknown;
  event_created_at: Date | null;
}

async function readEvent(client: ClientBase, id: number | undefined): Promise<{ served_by: ServedBy; event: KitEvent | null }> {
  if (id === undefined) return { served_by: await queryServedBy(client), event: null };
  try {
    const { rows } = await client.query<EventRow>(SELECT_EVENT_WITH_SERVER_SQL, [id]);
    const row = rows[0];
    if (row === undefined) throw new Error('event query returned no row');
    const event =
      row.event_id === null
        ? null
        : { id: Number(row.event_id), payload: row.event_payload, created_at: (row.event_created_at as Date).toISOString() };
    return { served_by: toServedBy(row), event };
  } catch (err) {
    // The table is created by the first write; until then a read is simply a miss.
    if (sqlStateOf(err) === '42P01') return { served_by: await queryServedBy(client), event: null };
    throw err;
  }
}

// Inside Lambda, a miswired environment fails the init phase (see invocation.ts).
validateAtColdStart(ROLE);

export const handler = async (event: unknown, context?: Context): Promise<ReadResponse> =>
  instrument('read', context, async () => {
    const config = getConfigForRole(ROLE);
    const { id } = parseReadEvent(event);
    const { result, connection } = await withClient(config, (client) => readEvent(client, id), {
      remainingTimeMs: remainingTime(context),
    });
    return { served_by: result.served_by, event: result.event, connection };
  });
