import { handle } from 'hono/aws-lambda';
import { configuredRuntime } from '../../shared/configured-runtime';
import { gatewayFromConfig } from '../../shared/gateway-keys';
import { createPlatformApp } from './app';

export const handler = handle(createPlatformApp(configuredRuntime({ gateway: gatewayFromConfig() })));
