import { handle } from 'hono/aws-lambda';
import { configuredRuntime } from '../../shared/configured-runtime';
import { gatewayFromConfig } from '../../shared/gateway-keys';
import { platformSecretsLoader } from '../../shared/platform/platform-secrets';
import { createPlatformApp } from './app';

export const handler = handle(createPlatformApp(configuredRuntime({ gateway: gatewayFromConfig(), platformSecrets: platformSecretsLoader() })));
