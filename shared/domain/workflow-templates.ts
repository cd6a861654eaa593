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
}

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

export function renderTemplate(template: string, scope: TemplateScope): string {
  return template.replace(/\{\{\s*([^{}]*?)\s*\}\}/g, (_, expr: string) => {
    if (expr === 'input' || expr === 'user_message') return scope.input;
    if (expr === 'category') return scope.category ?? '';
    if (expr === 'context') return scope.context ?? '';
    const parts = expr.split('.');
    if (parts[0] === 'parameters') return templateText(lookup(scope.parameters, parts.slice(1)));
    if (parts[0] === 'steps' && parts[2] === 'output') return templateText(lookup(scope.outputs[parts[1]!], parts.slice(3)));
    return '';
  });
}
