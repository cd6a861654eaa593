import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import { getRequestListener, RequestError, type ServerType } from '@hono/node-server';
import { isoNow, type Clock } from '../shared/clock';
import { AppError } from '../shared/errors';
import { isOpenAiPath, openAiErrorBody } from '../shared/http/error-handler';
import { newId } from '../shared/ids';

/**
 * The error body the route at `path` promises (OpenAI's shape under the OpenAI-compatible paths,
 * the API's envelope elsewhere), with the request id a caller quotes.
 */
function errorBody(clock: Clock, path: string | undefined, error: AppError): { requestId: string; body: string } {
  const requestId = newId('request', clock.now());
  const shaped = path && isOpenAiPath(path) ? openAiErrorBody(error) : { error: { code: error.code, message: error.message }, meta: { timestamp: isoNow(clock), requestId } };
  return { requestId, body: JSON.stringify(shaped) };
}

/** The path of the request line Node's parser kept, if it has one. */
function pathOf(rawPacket: Buffer | undefined): string | undefined {
  const target = rawPacket?.toString('latin1').split('\r\n', 1)[0]?.split(' ')[1];
  return target?.startsWith('/') ? target.split('?')[0] : undefined;
}

/**
 * A request Node's HTTP parser refuses (an unknown method, bytes that are not a path) never reaches
 * the app: answer it as the app answers any bad request — a 400 with the API's error body — instead
 * of Node's bare 400, and close the connection (the parser cannot find the next request).
 */
function answerClientError(clock: Clock, error: Error & { code?: string; rawPacket?: Buffer }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const { requestId, body } = errorBody(
    clock,
    pathOf(error.rawPacket),
    tooLarge ? new AppError('PAYLOAD_TOO_LARGE', 'Request headers are too large (at most 16 KB)') : new AppError('INVALID_REQUEST', 'The request is not valid HTTP (method, path or headers)'),
  );
  socket.end(
    `HTTP/1.1 ${tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * A request Node parses but no URL can be made of (a Host header such as `evil.example:80@127.0.0.1`,
 * a backslash in the path) is the caller's 400 with the API's error body, not the adapter's empty one.
 */
function answerAdapterError(clock: Clock, path: string | undefined, error: unknown): Response {
  // Anything else the adapter catches escaped the app's own error handler: a 500, still with a body.
  const answer =
    error instanceof RequestError
      ? new AppError('INVALID_REQUEST', 'The request’s Host header or path does not form a URL')
      : new AppError('INTERNAL_ERROR', 'Internal error; quote the requestId when reporting it');
  const { requestId, body } = errorBody(clock, path, answer);
  return new Response(body, { status: answer.statusCode, headers: { 'content-type': 'application/json', 'x-request-id': requestId } });
}

/** Local mode's HTTP server over an app's fetch; resolves once it listens. */
export async function startHttpServer(fetch: (request: Request) => Response | Promise<Response>, options: { port: number; hostname: string; clock: Clock }): Promise<ServerType> {
  // The adapter's error handler is not told the request; a listener per request closes over its path.
  const server = createServer((incoming, outgoing) => {
    // The listener answers every failure itself (errorHandler); nothing is left to reject.
    void getRequestListener(fetch, { hostname: options.hostname, errorHandler: (error) => answerAdapterError(options.clock, incoming.url?.split('?')[0], error) })(incoming, outgoing);
  });
  server.on('clientError', (error: Error & { code?: string }, socket: Socket) => answerClientError(options.clock, error, socket));
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
    server.listen(options.port, options.hostname);
  });
  return server;
}
