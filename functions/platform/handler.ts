import { schedulerFromConfig } from '../../shared/schedules/eventbridge-scheduler';
import { handle } from 'hono/aws-lambda';
import { codeRunnerFromConfig } from '../../shared/code/code-runner-from-config';
import { configuredRuntime } from '../../shared/configured-runtime';
import { preloadIfConfigured } from '../../shared/load-once';
import { gatewayFromConfig } from '../../shared/gateway-keys';
import { platformSecretsLoader } from '../../shared/platform/platform-secrets';
import { kmsSecretBoxFromConfig } from '../../shared/secrets/kms-secret-box';
import { createPlatformApp } from './app';
import { modelResolver } from '../../shared/models/resolve-model';

// The models: the admin's listing of providers. The secret box seals the auth of tools given to agents written through the platform API.
export const handler = handle(createPlatformApp(configuredRuntime({ scheduler: schedulerFromConfig(), gateway: gatewayFromConfig(), platformSecrets: platformSecretsLoader(), secrets: kmsSecretBoxFromConfig(), models: modelResolver(), code: codeRunnerFromConfig() })));
await preloadIfConfigured();
