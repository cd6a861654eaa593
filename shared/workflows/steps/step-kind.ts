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
  /** Records the config names (a source, an agent): each must be the tenant's when the workflow is written. */
  references?(config: z.infer<Config>): StepReference[];
  /** Steps of its own that the kind runs (a map's): prepared, presented and compiled with the workflow's. */
  readonly nested?: { steps(config: z.infer<Config>): StepLike[]; withSteps(config: z.infer<Config>, steps: StepLike[]): z.infer<Config> };
  /** The steps it chooses between (a condition's): each must run after it. */
  branches?(config: z.infer<Config>): { then: string[]; else: string[] };
  /** The categories it chooses from (a classification's): what `when` may name. */
  categories?(config: z.infer<Config>): string[];
  /**
   * What its output gives the steps after it besides `steps.<id>.output`: the template variables
   * it sets (`{{category}}`, `{{context}}`: the latest such step's), and how (passages too).
   */
  readonly publishes?: { readonly variables: readonly string[]; into(output: unknown, scope: RunScope): void };
  /** It may wait for a person: an execution that ran one is listed among the waiting until it ends. */
  readonly waits?: true;
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
