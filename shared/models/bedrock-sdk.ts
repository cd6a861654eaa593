import { loadOnce } from '../load-once';

/** The SDK's Bedrock Runtime module, loaded with the first Bedrock call (chat, embedding or rerank), not at a cold start. */
export const bedrockSdk = loadOnce(() => import('@aws-sdk/client-bedrock-runtime'));
