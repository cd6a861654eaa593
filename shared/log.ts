import { Logger, LogLevelThreshold } from '@aws-lambda-powertools/logger';
import { config } from './config';
import { sourceStack } from './source-stack';
import { frameSlot, slotValue, withSlot } from './work-frame';

/**
 * One JSON object per line, in Powertools for AWS Lambda's shape (`level`, `message`, `timestamp`,
 * `service`, then the fields), in Lambda and locally alike: CloudWatch Logs Insights and `jq` read
 * it as is. Every line written while a request or queued message is handled carries that work's
 * context (request id, tenant, message id), concurrent requests in one process each their own.
 */
const LEVELS = { debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR', silent: 'SILENT' } as const;
const logger = new Logger({ serviceName: config.serviceName, logLevel: LEVELS[config.logLevel] });
const fieldsSlot = frameSlot<Record<string, unknown>>('log fields');

type Level = 'debug' | 'info' | 'warn' | 'error';
const THRESHOLDS = { debug: LogLevelThreshold.DEBUG, info: LogLevelThreshold.INFO, warn: LogLevelThreshold.WARN, error: LogLevelThreshold.ERROR } as const;
// A line below the logger's level (its current one: sampling may lower it) is not built at all:
// Powertools would merge its fields and read the environment before it finds out (every
// request's access line, at LOG_LEVEL=warn).
const write = (level: Level) => (msg: string, fields: Record<string, unknown> = {}) => {
  if (THRESHOLDS[level] < logger.level) return;
  logger[level](msg, { ...slotValue(fieldsSlot), ...fields });
};

export const log = { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };

/** Runs `fn` with `fields` (and the enclosing context's) on every line it logs. */
export function withLogContext<T>(fields: Record<string, unknown>, fn: () => T): T {
  return withSlot(fieldsSlot, { ...slotValue(fieldsSlot), ...fields }, fn);
}

/** Adds fields to the current context's lines from here on (the tenant, once authentication knows it). */
export function addLogContext(fields: Record<string, unknown>): void {
  const current = slotValue(fieldsSlot);
  if (current) Object.assign(current, fields);
}

/** Error fields safe to log: name, message and stack (in the source's terms), never request data. */
export function errorFields(error: unknown): Record<string, unknown> {
  if (error instanceof Error) return { error: { name: error.name, message: error.message, stack: error.stack && sourceStack(error.stack) } };
  return { error: String(error) };
}
