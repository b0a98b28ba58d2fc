/**
 * What both handlers do around their database work: time it, emit exactly
 * one structured log line per invocation, and log failures with their code.
 */
import type { Context } from 'aws-lambda';
import { getConfigForRole, type EndpointRole } from './config';
import { buildClientConfig, type ConnectionInfo } from './db';
import { logger } from './logger';
import type { ServedBy } from './server-info';

export interface InvocationResult {
  readonly served_by: ServedBy;
  readonly connection: ConnectionInfo;
}

const round = (ms: number): number => Math.round(ms * 100) / 100;

export async function instrument<T extends InvocationResult>(
  handlerName: 'read' | 'write',
  context: Context | undefined,
  work: () => Promise<T>,
): Promise<T & { duration_ms: number }> {
  const started = performance.now();
  if (context !== undefined) logger.addContext(context);
  try {
    const result = await work();
    const duration_ms = round(performance.now() - started);
    logger.info(`${handlerName} invocation`, {
      handler: handlerName,
      mode: result.connection.mode,
      reused: result.connection.reused,
      attempts: result.connection.attempts,
      duration_ms,
      served_by: result.served_by,
    });
    return { ...result, duration_ms };
  } catch (err) {
    const e = err as { name?: string; code?: string; retryable?: boolean };
    logger.error(`${handlerName} invocation failed`, {
      handler: handlerName,
      error_type: e.name,
      code: e.code,
      retryable: e.retryable,
      duration_ms: round(performance.now() - started),
      error: err as Error,
    });
    throw err;
  }
}

/** Milliseconds left before the Lambda deadline, when running inside Lambda. */
export function remainingTime(context: Context | undefined): (() => number) | undefined {
  return context === undefined ? undefined : () => context.getRemainingTimeInMillis();
}

/**
 * Cold-start validation. Inside the Lambda runtime (AWS_LAMBDA_RUNTIME_API is
 * set only there) the environment, the endpoint role and the CA bundle are
 * checked while the container initialises, so a miswired function fails its
 * init phase loudly instead of on some later request. Elsewhere (tests, local
 * scripts) the same checks run lazily on the first invocation, so importing a
 * handler has no side effects.
 */
export function validateAtColdStart(role: EndpointRole, env: NodeJS.ProcessEnv = process.env): void {
  if (env.AWS_LAMBDA_RUNTIME_API === undefined) return;
  buildClientConfig(getConfigForRole(role));
}
