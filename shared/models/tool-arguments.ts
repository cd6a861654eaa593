/**
 * A tool call's arguments as providers send them: a JSON object (Anthropic, Bedrock) or its text
 * (OpenAI, and every streamed call). Anything but a JSON object is undefined: the call then fails
 * its argument check and the model is told.
 */
export const argumentsOf = (value: unknown): Record<string, unknown> | undefined =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

export function parseArguments(raw: string | undefined): Record<string, unknown> | undefined {
  try {
    return argumentsOf(JSON.parse(raw || '{}'));
  } catch {
    return undefined;
  }
}
