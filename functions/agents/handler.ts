import { streamHandle } from 'hono/aws-lambda';
import { configuredRuntime } from '../../shared/configured-runtime';
import { modelResolver } from '../../shared/models/resolve-model';
import { createAgentsApp } from './app';

// Response streaming (API Gateway REST, STREAM transfer mode): converse and chat completions
// stream their server-sent events; every other answer is streamed in one piece.
export const handler = streamHandle(createAgentsApp(configuredRuntime({ models: modelResolver() })));
