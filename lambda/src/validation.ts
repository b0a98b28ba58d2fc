/**
 * Event validation. Lambda hands the handler whatever JSON the caller sent,
 * so the shape is checked before any database work.
 */
import { ValidationError } from './errors';

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

export function parseWriteEvent(event: unknown): WriteEvent {
  const obj = asObject(event);
  if (obj.id === undefined) throw new ValidationError('id', undefined, 'is required');
  const id = eventId(obj.id);
  const payload = obj.payload === undefined ? {} : obj.payload;
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new ValidationError('payload', payload, 'must be a JSON object when present');
  }
  return { id, payload: payload as Record<string, unknown> };
}
