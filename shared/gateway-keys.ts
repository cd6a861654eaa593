import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  NotFoundException,
} from '@aws-sdk/client-api-gateway';

/**
 * In AWS, API Gateway checks `X-API-Key` before the app does, so every customer key must also be
 * an API Gateway key in the usage plan of its plan. The value is the same; only its hash is
 * stored in DynamoDB.
 */
export async function registerGatewayKey(
  client: APIGatewayClient,
  key: { value: string; name: string; usagePlanId: string },
): Promise<string> {
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
  try {
    await client.send(new DeleteApiKeyCommand({ apiKey: gatewayKeyId }));
  } catch (error) {
    if (!(error instanceof NotFoundException)) throw error;
  }
}
