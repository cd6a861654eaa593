import { Writable } from 'node:stream';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { lambdaContext } from './lambda-events';

/**
 * The part of the Lambda Node.js runtime that response-streaming handlers call (`awslambda`),
 * reproduced so a streaming handler can be invoked here: `streamifyResponse` marks the handler,
 * `HttpResponseStream.from` attaches the status and headers the runtime sends before the body.
 */
interface Metadata {
  statusCode: number;
  headers: Record<string, string>;
}

class ResponseStream extends Writable {
  metadata?: Metadata;
  readonly chunks: Buffer[] = [];
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void) {
    this.chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    done();
  }
}

const runtime = {
  streamifyResponse: (fn: unknown) => Object.assign(fn as object, { streaming: true }),
  HttpResponseStream: {
    from: (stream: ResponseStream, metadata: Metadata) => {
      stream.metadata = metadata;
      return stream;
    },
  },
};
(globalThis as unknown as { awslambda: typeof runtime }).awslambda = runtime;

type StreamingHandler = (event: APIGatewayProxyEvent, stream: Writable, context: unknown) => Promise<void>;

/** Invokes a streaming handler as API Gateway does in STREAM mode; returns what the client receives. */
export async function invokeStreaming(handler: unknown, event: APIGatewayProxyEvent) {
  const stream = new ResponseStream();
  const finished = new Promise<void>((resolve) => stream.on('finish', () => resolve()));
  await (handler as StreamingHandler)(event, stream, lambdaContext);
  await finished;
  const body = Buffer.concat(stream.chunks).toString('utf8');
  const headers = stream.metadata?.headers ?? {};
  return {
    statusCode: stream.metadata?.statusCode ?? 500,
    headers,
    body,
    json: (headers['content-type'] ?? '').includes('application/json') && body ? JSON.parse(body) : undefined,
  };
}
