/**
 * One Powertools logger per container: created at module scope so its
 * configuration (service name, level from POWERTOOLS_LOG_LEVEL) is resolved
 * once at cold start and every log line is a single structured JSON object.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { SERVICE_NAME } from './environment';

export const logger = new Logger({ serviceName: SERVICE_NAME });
