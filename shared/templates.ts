/**
 * Renders `{{…}}` templates in one pass: substituted text is data and is never parsed again,
 * so a user message containing `{{parameters.secret}}` stays as written.
 */
export interface TemplateScope {
  input: string;
  parameters: Record<string, unknown>;
  outputs: Record<string, unknown>;
  category?: string;
  context?: string;
  /** The end user the execution acts for (id null without one). */
  user?: { id: string | null; groups: string[]; verified: boolean };
  /** Inside a `map` step's sub-steps: the item and its position. */
  item?: unknown;
  index?: number;
}

export const TEMPLATE = /\{\{\s*([^{}]*?)\s*\}\}/g;
const WHOLE_TEMPLATE = /^\{\{\s*([^{}]*?)\s*\}\}$/;
const HAS_TEMPLATE = /\{\{[^{}]*\}\}/;

function lookup(value: unknown, path: string[]): unknown {
  let current = value;
  for (const part of path) {
    if (current === null || current === undefined) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

/** A value as template text: strings as they are, absent values empty, anything else as JSON. */
export const templateText = (value: unknown) => (value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value));

/**
 * A value placed in a URL, encoded so it stays inside its segment (it cannot add a `/`, `?` or
 * `#`); undefined for `.` and `..`, which a URL parser takes as a move along the path however
 * they are spelled (`%2e%2e` included), so `/orders/{{id}}/refund` with `..` would call `/refund`.
 */
export const urlComponent = (value: string): string | undefined => (value === '.' || value === '..' ? undefined : encodeURIComponent(value));

/** What one template variable stands for (undefined when it names nothing). */
function valueOf(expr: string, scope: TemplateScope): unknown {
  if (expr === 'input' || expr === 'user_message') return scope.input;
  if (expr === 'category') return scope.category;
  if (expr === 'context') return scope.context;
  if (expr === 'index') return scope.index;
  const parts = expr.split('.');
  if (parts[0] === 'item') return lookup(scope.item, parts.slice(1));
  if (parts[0] === 'user' && parts.length === 2) return lookup(scope.user ?? { id: null, groups: [], verified: false }, parts.slice(1));
  if (parts[0] === 'parameters') return lookup(scope.parameters, parts.slice(1));
  if (parts[0] === 'steps' && parts[2] === 'output') return lookup(scope.outputs[parts[1]!], parts.slice(3));
  return undefined;
}

export function renderTemplate(template: string, scope: TemplateScope): string {
  return template.replace(TEMPLATE, (_, expr: string) => templateText(valueOf(expr, scope)));
}

/**
 * Renders every string inside a JSON value (a request body, tool arguments). A string that is
 * exactly one template becomes the value itself, so `"{{steps.lookup.output.body.amount}}"` stays
 * a number and an object stays an object.
 */
export function renderDeep(value: unknown, scope: TemplateScope): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE_TEMPLATE.exec(value);
    if (whole) return valueOf(whole[1]!, scope) ?? null;
    return renderTemplate(value, scope);
  }
  if (Array.isArray(value)) return value.map((v) => renderDeep(v, scope));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderDeep(v, scope)]));
  return value;
}

/** Every template string inside a JSON value, with its path below the field (`body.customer.id`). */
export function templateStrings(value: unknown, path: string): Array<[string, string]> {
  if (typeof value === 'string') return HAS_TEMPLATE.test(value) ? [[path, value]] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => templateStrings(v, `${path}[${i}]`));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => templateStrings(v, `${path}.${k}`));
  return [];
}

/** The data a JSONata expression reads: the request, every settled step's output, the item of a map. */
export function expressionData(scope: TemplateScope): Record<string, unknown> {
  return {
    input: scope.input,
    parameters: scope.parameters,
    steps: Object.fromEntries(Object.entries(scope.outputs).map(([id, output]) => [id, { output }])),
    ...(scope.category !== undefined ? { category: scope.category } : {}),
    ...(scope.user ? { user: scope.user } : {}),
    ...(scope.item !== undefined ? { item: scope.item, index: scope.index } : {}),
  };
}
