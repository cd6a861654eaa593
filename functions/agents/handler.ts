import { streamHandle } from 'hono/aws-lambda';
import { app } from './app';

// Response streaming (API Gateway REST, STREAM transfer mode): converse and chat completions
// stream their server-sent events; every other answer is streamed in one piece.
export const handler = streamHandle(app);
