import type { z } from '@hono/zod-openapi';
import type { Runtime } from '../../runtime';
import type { TenantScope } from '../../tenancy';
import type { TemplateScope } from '../../templates';

/** What a step reads while it runs: the runtime, the tenant, rendered templates' values. */
export interface StepContext {
  rt: Runtime;
  scope: TenantScope;
  vars: TemplateScope;
  /** The latest search's passages before this step (a generation is grounded in them). */
  passages?: Array<{ title: string; text: string }>;
  /** When the step's model or tool call must have answered (the step's `timeoutSeconds`). */
  deadline: AbortSignal;
  /** The step's time limit, for calls that take a number rather than a signal (default 30 s). */
  timeoutMs?: number;
  /** The API key that started the execution, for usage accounting of what the step runs. */
  keyId?: string;
}

export interface StepResult {
  output: unknown;
  usage?: { inputTokens: number; outputTokens: number };
  /** The model that used it (`provider/model`), for usage accounting. */
  model?: string;
}

/** A config being made ready to store: `path` names the step's config for errors (`steps[2].config`). */
export interface PrepareContext {
  rt: Runtime;
  scope: TenantScope;
  path: string;
  /** The same step's stored config before this write, if it had one: secrets not sent again are kept from it. */
  current?: Record<string, unknown>;
}

/**
 * What every kind of workflow step declares: its config (validated when the workflow is written),
 * which config fields hold `{{…}}` templates (strings, or JSON values whose strings are templates),
 * and what its output holds. Adding a kind adds a file beside this one and a line in `index.ts`.
 */
export interface StepShape<Config extends z.ZodType = z.ZodObject> {
  readonly type: string;
  readonly config: Config;
  /** Config fields holding `{{…}}` templates (checked by the compiler, rendered by the step). */
  readonly templateFields: readonly string[];
  /** Whether `{{steps.<id>.output.<path>}}` names something this kind's output holds. */
  isOutputPath(path: string[]): boolean;
  /** Makes a validated config ready to store (secrets sealed, documents read); the config as stored. */
  prepare?(config: z.infer<Config>, context: PrepareContext): Promise<z.infer<Config>>;
  /** The stored config as responses show it (no sealed secret). */
  present?(config: z.infer<Config>): unknown;
}

/** A step that does work and gives an output. */
export interface StepKind<Config extends z.ZodType = z.ZodObject> extends StepShape<Config> {
  run(config: z.infer<Config>, context: StepContext): Promise<StepResult>;
}

/**
 * A step that steers the execution rather than doing work (`condition`, `map`, `human`): the
 * executor runs it, since it chooses, fans out or pauses.
 */
export interface ControlKind<Config extends z.ZodType = z.ZodObject> extends StepShape<Config> {
  readonly control: true;
}

export const isControl = (kind: StepShape<z.ZodType>): kind is ControlKind<z.ZodType> => 'control' in kind;
