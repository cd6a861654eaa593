import { z } from 'zod';
import { CODE_LIMITS, type CodeResult } from '../../shared/code/code-job';
import { runJavaScript } from '../../shared/code/javascript-sandbox';

/**
 * The code-runner function: runs one job of tenants' code in QuickJS and answers its result. It is
 * invoked only by Cairn's own functions, has no permission beyond its logs and no secrets, and
 * one invocation runs one job (Lambda gives each its own instance while it runs).
 */
const job = z.object({
  op: z.enum(['run', 'check']),
  language: z.literal('javascript'),
  source: z.string().max(100_000),
  form: z.enum(['module', 'script']),
  args: z.unknown().optional(),
  timeoutMs: z.number().int().min(1).max(CODE_LIMITS.timeoutMs.max),
  memoryMb: z.number().int().min(1).max(CODE_LIMITS.memoryMb.max),
});

export const handler = async (event: unknown): Promise<CodeResult> => runJavaScript(job.parse(event));
