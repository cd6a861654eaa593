import { config } from '../config';

/** Providers every deployment knows: the built-in engine and the three whose settings have their own variables. */
export const BUILT_IN_PROVIDERS = ['local', 'bedrock', 'openai', 'anthropic'] as const;

/** The providers model names may lead with here: the built-in ones and those MODEL_PROVIDERS names. */
export const knownProviders = (): string[] => [...new Set([...BUILT_IN_PROVIDERS, ...Object.keys(config.modelProviders)])];

/**
 * Model names are `provider/model` or a bare name that resolves through DEFAULT_MODEL_PROVIDER.
 * Bedrock model ids contain dots and colons (`anthropic.claude-3-haiku-20240307-v1:0`, inference
 * profiles `us.anthropic.…`), so only the first slash separates the provider.
 */
const MODEL_PART = /^[A-Za-z0-9][A-Za-z0-9._:\-/]{0,199}$/;

/** `provider/model` or a bare name, by its form alone. */
export function isModelNameShaped(name: string): boolean {
  const slash = name.indexOf('/');
  return slash < 0 ? MODEL_PART.test(name) : /^[a-z][a-z0-9-]*$/.test(name.slice(0, slash)) && MODEL_PART.test(name.slice(slash + 1));
}

/** The provider a model name leads with, when it names one. */
export const providerOf = (name: string): string | undefined => (name.includes('/') ? name.slice(0, name.indexOf('/')) : undefined);

/** Whether the name's provider (if it names one) is configured here. */
export const isKnownProvider = (name: string): boolean => {
  const provider = providerOf(name);
  return provider === undefined || knownProviders().includes(provider);
};

export function isValidModelName(name: string): boolean {
  return isModelNameShaped(name) && isKnownProvider(name);
}

export const MODEL_NAME_REASON = `must be a model name: <provider>/<model> (providers here: ${knownProviders().join(', ')}), or a bare name such as gpt-4`;
export const unknownProviderReason = (name: string) => `names provider ${providerOf(name)}, which this deployment does not have (providers here: ${knownProviders().join(', ')}; MODEL_PROVIDERS declares more)`;
