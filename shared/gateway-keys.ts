import type { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { config, type Plan } from './config';
import { noGateway, type Gateway } from './gateway';
import { loadOnce } from './load-once';

/** The SDK's API Gateway module, loaded when a key is first registered or removed, not at a cold start. */
const sdk = loadOnce(() => import('@aws-sdk/client-api-gateway'));

/**
 * In AWS, API Gateway checks `X-API-Key` before the app does, so every customer key must also be
 * an API Gateway key in the usage plan of its plan. The value is the same; only its hash is
 * stored in DynamoDB.
 */
export async function registerGatewayKey(
  client: APIGatewayClient,
  key: { value: string; name: string; usagePlanId: string },
): Promise<string> {
  const { CreateApiKeyCommand, CreateUsagePlanKeyCommand, DeleteApiKeyCommand } = await sdk();
  const created = await client.send(new CreateApiKeyCommand({ name: key.name, value: key.value, enabled: true }));
  if (!created.id) throw new Error('API Gateway created a key without an id');
  try {
    await client.send(new CreateUsagePlanKeyCommand({ usagePlanId: key.usagePlanId, keyId: created.id, keyType: 'API_KEY' }));
  } catch (error) {
    // A key outside every usage plan would be rejected anyway: don't leave it behind.
    await client.send(new DeleteApiKeyCommand({ apiKey: created.id }));
    throw error;
  }
  return created.id;
}

export async function removeGatewayKey(client: APIGatewayClient, gatewayKeyId: string): Promise<void> {
  const { DeleteApiKeyCommand, NotFoundException } = await sdk();
  try {
    await client.send(new DeleteApiKeyCommand({ apiKey: gatewayKeyId }));
  } catch (error) {
    if (!(error instanceof NotFoundException)) throw error;
  }
}

/**
 * Keys in the usage plans named `<prefix><plan>`, found by name once per instance. (Passing the
 * usage plan ids in the function's environment would make the function depend on the usage
 * plans, which depend on the deployment, which depends on the function: a cycle CloudFormation
 * refuses.)
 */
export function apiGateway(clientOf: () => Promise<APIGatewayClient>, usagePlanNamePrefix: string): Gateway {
  let planIds: Map<string, string> | undefined;
  async function usagePlanIdFor(plan: Plan): Promise<string> {
    if (!planIds) {
      const { paginateGetUsagePlans } = await sdk();
      const client = await clientOf();
      const found = new Map<string, string>();
      for await (const page of paginateGetUsagePlans({ client }, { limit: 500 })) {
        for (const p of page.items ?? []) if (p.name?.startsWith(usagePlanNamePrefix) && p.id) found.set(p.name.slice(usagePlanNamePrefix.length), p.id);
      }
      planIds = found;
    }
    const id = planIds.get(plan);
    if (!id) throw new Error(`no API Gateway usage plan named ${usagePlanNamePrefix}${plan}`);
    return id;
  }
  return {
    enabled: true,
    register: async (key) => {
      const usagePlanId = await usagePlanIdFor(key.plan);
      return registerGatewayKey(await clientOf(), { value: key.value, name: key.name, usagePlanId });
    },
    remove: async (gatewayKeyId) => removeGatewayKey(await clientOf(), gatewayKeyId),
  };
}

/** The Lambda's gateway from config: enabled where the stack set USAGE_PLAN_NAME_PREFIX. */
export function gatewayFromConfig(): Gateway {
  if (!config.usagePlanNamePrefix) return noGateway;
  const client = loadOnce(async () => new (await sdk()).APIGatewayClient({ region: config.region, ...(config.apiGatewayEndpoint ? { endpoint: config.apiGatewayEndpoint } : {}) }));
  return apiGateway(client, config.usagePlanNamePrefix);
}
