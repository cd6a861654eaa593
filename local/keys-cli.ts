import { parseArgs } from 'node:util';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { config, PLANS, type Plan } from '../shared/config';
import { registerGatewayKey, removeGatewayKey } from '../shared/gateway-keys';
import { systemClock } from '../shared/clock';
import { apiKeysStore, generateApiKey } from '../shared/store/api-keys';
import { createDb } from '../shared/store/db';
import { scopeOf, TENANT_ID_PATTERN } from '../shared/tenancy';
import { openLocalStore, type LocalStore } from './local-store';

const USAGE = `Usage:
  npm run keys -- create --tenant <id> [--plan free|pro|enterprise|unlimited] [--name <label>]
  npm run keys -- list   --tenant <id>
  npm run keys -- revoke --tenant <id> --key <keyId>

Locally it uses the DynamoDB of a running \`npm start\` (or starts DynamoDB Local on DATA_DIR).
Against AWS add --aws (TABLE_NAME and AWS credentials from the environment) and, for create,
--usage-plan-id <id> from the stack outputs, so API Gateway accepts the key too.`;

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(2);
}

async function main() {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      tenant: { type: 'string' },
      plan: { type: 'string', default: 'free' },
      name: { type: 'string' },
      key: { type: 'string' },
      aws: { type: 'boolean', default: false },
      'usage-plan-id': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const command = positionals[0];
  if (values.help || !command) fail('');
  if (!values.tenant || !TENANT_ID_PATTERN.test(values.tenant)) {
    fail('--tenant is required: 2–63 lower-case letters, digits, _ or -, starting with a letter or digit');
  }
  const scope = scopeOf(values.tenant);
  if (values['usage-plan-id'] && !values.aws) fail('--usage-plan-id goes with --aws');

  let store: LocalStore | undefined;
  if (!values.aws) store = await openLocalStore('tool');
  const gateway = values.aws ? new APIGatewayClient({ region: config.region }) : undefined;
  const { putTenant, createApiKey, listApiKeys, revokeApiKey } = apiKeysStore(createDb(store ? { endpoint: store.endpoint } : {}), systemClock);
  try {
    if (command === 'create') {
      if (!(PLANS as readonly string[]).includes(values.plan)) fail(`--plan must be one of: ${PLANS.join(', ')}`);
      const plan = values.plan as Plan;
      if (values.aws && plan !== 'unlimited' && !values['usage-plan-id']) {
        fail('--usage-plan-id is required with --aws: API Gateway rejects keys outside a usage plan');
      }
      const apiKey = generateApiKey();
      const gatewayKeyId =
        gateway && values['usage-plan-id']
          ? await registerGatewayKey(gateway, {
              value: apiKey,
              name: `${values.tenant}-${values.name ?? plan}-${systemClock.now()}`,
              usagePlanId: values['usage-plan-id'],
            })
          : undefined;
      await putTenant(scope, { name: values.tenant, plan });
      const { summary } = await createApiKey(scope, { plan, name: values.name, apiKey, gatewayKeyId });
      process.stdout.write(
        `Created ${summary.keyId} for tenant ${summary.tenantId} on plan ${plan}.\n` +
          `API key (shown once; store it now):\n${apiKey}\n`,
      );
    } else if (command === 'list') {
      const keys = await listApiKeys(scope);
      if (keys.length === 0) process.stdout.write(`No keys for tenant ${values.tenant}.\n`);
      for (const k of keys) process.stdout.write(`${k.keyId}  ${k.plan.padEnd(10)}  ${k.createdAt}  ${k.name ?? ''}\n`);
    } else if (command === 'revoke') {
      if (!values.key) fail('--key is required (see `list`)');
      const revoked = await revokeApiKey(scope, values.key);
      if (!revoked) fail(`No key ${values.key} for tenant ${values.tenant}`);
      if (gateway && revoked.gatewayKeyId) await removeGatewayKey(gateway, revoked.gatewayKeyId);
      process.stdout.write(`Revoked ${values.key}.\n`);
    } else {
      fail(`Unknown command: ${command}`);
    }
  } finally {
    gateway?.destroy();
    await store?.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`keys: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
