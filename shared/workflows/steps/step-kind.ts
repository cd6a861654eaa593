import type { z } from '@hono/zod-openapi';
import type { Runtime } from '../../runtime';
import type { TenantScope } from '../../tenancy';
import type { TemplateScope } from '../../templates';
import type { AwaitedRun, HumanRequest } from '../../store/executions';
import type { TokenUsage } from '../../models/types';
import type { ModelTallies, ModelTally } from '../../usage';

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
  /** The step being run, where it is one of an execution's own (not a map item's): what may wait on a background run. */
  at?: { workflowId: string; executionId: string; stepId: string };
}

export interface StepResult {
  output: unknown;
  usage?: TokenUsage;
  /** The model that answered (`provider/model`). */
  model?: string;
  /** What each model of the step's chain did (tokens, calls, failed calls), for usage accounting. */
  models?: ModelTallies;
  /** Lines its code logged (a code step's), kept with the step. */
  logs?: string[];
  /** Milliseconds its code ran, for usage accounting. */
  codeMs?: number;
}

/** A settled step's usage events, model by model: the first carries the step itself. */
export function modelUsageOf(result: StepResult): Array<Partial<ModelTally> & { model?: string }> {
  const models = Object.entries(result.models ?? {});
  if (models.length > 0) return models.map(([model, tally]) => ({ model, ...tally }));
  return [result.usage && result.model ? { model: result.model, ...result.usage, requests: 1 } : {}];
}

/** What a step may read: the request, the latest classification and search, and every settled step's output. */
export interface RunScope {
  vars: TemplateScope;
  passages?: Array<{ title: string; text: string }>;
}

/** A step as a definition holds it, whatever its kind (a map's own steps are steps too). */
export interface StepLike {
  id: string;
  type: string;
  config: Record<string, unknown>;
}

/** A record a step names, which must exist when the workflow is written; `field` is in the step's config. */
export interface StepReference {
  kind: 'KS' | 'AGENT';
  id: string;
  field: string;
}

/** A config being made ready to store: `path` names the step's config for errors (`steps[2].config`). */
export interface PrepareContext {
  rt: Runtime;
  scope: TenantScope;
  path: string;
  /** The same step's stored config before this write, if it had one: secrets not sent again are kept from it. */
  current?: Record<string, unknown>;
}

/** What a waiting step asks a person for (kept with the step's state). */
export type { HumanRequest } from '../../store/executions';

/**
 * What running a step gives the engine: a result (its output), a pause (a person is asked; the
 * step waits, up to a time), a fan-out (the items its `nested` steps run for, each a message), or
 * a background run it waits for (an agent step's: the run's end settles it).
 */
export type StepOutcome = StepResult | { pause: HumanRequest } | { fanOut: unknown[] } | { awaitRun: AwaitedRun };

/** How a paused step settles when its time runs out. */
export type TimedOut = { status: 'failed'; error: { code: string; message: string } } | { status: 'succeeded'; output: unknown };

/**
 * Everything a kind of workflow step is: its config (validated when the workflow is written),
 * which config fields hold `{{…}}` templates (strings, or JSON values whose strings are templates),
 * what its output holds, and what running it gives. The engine knows no kind by name, only these
 * hooks. Adding a kind adds a file beside this one and a line in `index.ts`.
 */
export interface StepKind<Config extends z.ZodType = z.ZodObject> {
  readonly type: string;
  readonly config: Config;
  /** Config fields holding `{{…}}` templates (checked by the compiler, rendered by the step). */
  readonly templateFields: readonly string[];
  /** Whether `{{steps.<id>.output.<path>}}` names something this kind's output holds. */
  isOutputPath(path: string[]): boolean;
  /** Runs the step once (an attempt): its result, a pause or a fan-out. */
  execute(config: z.infer<Config>, context: StepContext): Promise<StepOutcome>;
  /** Makes a validated config ready to store (secrets sealed, documents read); the config as stored. */
  prepare?(config: z.infer<Config>, context: PrepareContext): Promise<z.infer<Config>>;
  /** The stored config as responses show it (no sealed secret). */
  present?(config: z.infer<Config>): unknown;
  /** Records the config names (a source, an agent): each must be the tenant's when the workflow is written. */
  references?(config: z.infer<Config>): StepReference[];
  /** Steps of its own that the kind runs (a map's): prepared, presented and compiled with the workflow's. */
  readonly nested?: { steps(config: z.infer<Config>): StepLike[]; withSteps(config: z.infer<Config>, steps: StepLike[]): z.infer<Config> };
  /** A kind that fans out: how many items run at once, and whether one failed item fails the step. */
  readonly fansOut?: { concurrency(config: z.infer<Config>): number; failFast(config: z.infer<Config>): boolean };
  /** A kind that pauses: an execution that ran one may wait for a person, and its step settles so when the time is up. */
  readonly pauses?: { timedOut(config: z.infer<Config>): TimedOut };
  /**
   * A kind that chooses (a condition): the steps it chooses between (each must run after it), and,
   * given its output, the ones it left out.
   */
  readonly branches?: { among(config: z.infer<Config>): { then: string[]; else: string[] }; leftOut(config: z.infer<Config>, output: unknown): string[] };
  /** The categories it chooses from (a classification's): what `when` may name. */
  categories?(config: z.infer<Config>): string[];
  /**
   * What its output gives the steps after it besides `steps.<id>.output`: the template variables
   * it sets (`{{category}}`, `{{context}}`: the latest such step's), and how (passages too).
   */
  readonly publishes?: { readonly variables: readonly string[]; into(output: unknown, scope: RunScope): void };
}

/** A kind that only does work and gives a result (the kinds a map's own steps may be). */
export interface WorkKind<Config extends z.ZodType = z.ZodObject> extends StepKind<Config> {
  execute(config: z.infer<Config>, context: StepContext): Promise<StepResult>;
}
