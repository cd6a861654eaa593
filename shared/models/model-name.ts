export const PROVIDERS = ['local', 'bedrock', 'openai', 'anthropic'] as const;
export type Provider = (typeof PROVIDERS)[number];

/**
 * Model names are `provider/model` or a bare name that resolves through DEFAULT_MODEL_PROVIDER.
 * Bedrock model ids contain dots and colons (`anthropic.claude-3-haiku-20240307-v1:0`), so only
 * the first slash separates the provider.
 */
const MODEL_PART = /^[A-Za-z0-9][A-Za-z0-9._:\-/]{0,199}$/;

export function isValidModelName(name: string): boolean {
  const slash = name.indexOf('/');
  if (slash < 0) return MODEL_PART.test(name);
  const provider = name.slice(0, slash);
  return (PROVIDERS as readonly string[]).includes(provider) && MODEL_PART.test(name.slice(slash + 1));
}

export const MODEL_NAME_REASON = `must be a model name: ${PROVIDERS.map((p) => `${p}/<model>`).join(', ')}, or a bare name such as gpt-4`;
