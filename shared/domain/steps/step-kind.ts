import type { z } from '@hono/zod-openapi';
import type { Runtime } from '../../runtime';
import type { TenantScope } from '../../tenancy';
import type { TemplateScope } from '../workflow-templates';

/** What a step reads while it runs: the runtime, the tenant, rendered templates' values. */
export interface StepContext {
  rt: Runtime;
  scope: TenantScope;
  vars: TemplateScope;
  /** The latest search's passages before this step (a generation is grounded in them). */
  passages?: Array<{ title: string; text: string }>;
  /** When the step's model or tool call must have answered. */
  deadline: AbortSignal;
}

export interface StepResult {
  output: unknown;
  usage?: { inputTokens: number; outputTokens: number };
  /** The model that used it (`provider/model`), for usage accounting. */
  model?: string;
}

/**
 * One kind of workflow step: its config (validated when the workflow is written), which config
 * fields are templates, what its output holds, and how it runs. Adding a kind adds a file beside
 * this one and a line in `index.ts`.
 */
export interface StepKind<Config extends z.ZodObject = z.ZodObject> {
  readonly type: string;
  readonly config: Config;
  /** Config fields holding `{{…}}` templates (checked by the compiler, rendered by `run`). */
  readonly templateFields: readonly string[];
  /** Whether `{{steps.<id>.output.<path>}}` names something this kind's output holds. */
  isOutputPath(path: string[]): boolean;
  run(config: z.infer<Config>, context: StepContext): Promise<StepResult>;
}
