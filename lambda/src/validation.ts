/**
 * Event validation. Lambda hands the handler whatever JSON the caller sent,
 * so the shape is checked before any database work.
 */
import { ValidationError } from './errors';

/**
 * Bounds on a write's payload. Lambda accepts up to 6 MB per synchronous invocation, but a row of
 * kit_events is meant to be small, and a payload nested deeper than any real document would make
 * JSON.stringify (and PostgreSQL's jsonb parser) recurse until the stack runs out.
 */
export const MAX_PAYLOAD_BYTES = 256 * 1024;
export const MAX_PAYLOAD_DEPTH = 32;

export interface ReadEvent {
  readonly id?: number;
}

export interface WriteEvent {
  readonly id: number;
  readonly payload: Record<string, unknown>;
}

function asObject(event: unknown): Record<string, unknown> {
  // An invocation without a payload arrives as {} or null depending on the caller.
  if (event === undefined || event === null) return {};
  if (typeof event !== 'object' || Array.isArray(event)) {
    throw new ValidationError('(event)', event, 'must be a JSON object');
  }
  return event as Record<string, unknown>;
}

function eventId(value: unknown): number {
  // Safe integers only: kit_events.id is bigint, but ids beyond 2^53 would be
  // silently rounded by JSON/JavaScript numbers.
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new ValidationError('id', value, `must be an integer between 1 and ${Number.MAX_SAFE_INTEGER}`);
  }
  return value;
}

export function parseReadEvent(event: unknown): ReadEvent {
  const obj = asObject(event);
  return obj.id === undefined ? {} : { id: eventId(obj.id) };
}

/**
 * Walks the payload without recursion (a 200,000-deep array must not exhaust the stack), rejecting
 * nesting beyond MAX_PAYLOAD_DEPTH and NUL characters in strings and keys, which jsonb cannot store
 * (SQLSTATE 22P05). Every rejection names the field by its path, e.g. `payload.items[3].name`.
 */
function checkPayloadShape(payload: Record<string, unknown>): void {
  const pending: Array<{ value: unknown; path: string; depth: number }> = [{ value: payload, path: 'payload', depth: 1 }];
  while (pending.length > 0) {
    const { value, path, depth } = pending.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) throw new ValidationError(path, value, 'must not contain a NUL character (\\u0000), which PostgreSQL cannot store');
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_PAYLOAD_DEPTH) {
      throw new ValidationError(path, Array.isArray(value) ? '(array)' : '(object)', `nests deeper than ${MAX_PAYLOAD_DEPTH} levels; flatten the payload`);
    }
    if (Array.isArray(value)) {
      value.forEach((item, i) => pending.push({ value: item, path: `${path}[${i}]`, depth: depth + 1 }));
      continue;
    }
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) throw new ValidationError(path, key, 'has a key with a NUL character (\\u0000), which PostgreSQL cannot store');
      pending.push({ value: item, path: `${path}.${key}`, depth: depth + 1 });
    }
  }
}

function checkPayloadSize(payload: Record<string, unknown>): void {
  const bytes = Buffer.byteLength(JSON.stringify(payload), 'utf8');
  if (bytes > MAX_PAYLOAD_BYTES) {
    throw new ValidationError('payload', `(${bytes} bytes)`, `is larger than ${MAX_PAYLOAD_BYTES} bytes as JSON; store large documents elsewhere (e.g. S3) and write a reference`);
  }
}

export function parseWriteEvent(event: unknown): WriteEvent {
  const obj = asObject(event);
  if (obj.id === undefined) throw new ValidationError('id', undefined, 'is required');
  const id = eventId(obj.id);
  const payload = obj.payload === undefined ? {} : obj.payload;
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new ValidationError('payload', payload, 'must be a JSON object when present');
  }
  // Shape first: it bounds the depth JSON.stringify will recurse to when the size is measured.
  checkPayloadShape(payload as Record<string, unknown>);
  checkPayloadSize(payload as Record<string, unknown>);
  return { id, payload: payload as Record<string, unknown> };
}
