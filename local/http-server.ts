import { isoNow, type Clock } from '../shared/clock';
import type { Socket } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { newId } from '../shared/ids';

/**
 * A request Node's HTTP parser refuses (an unknown method, bytes that are not a path) never reaches
 * the app: answer it as the app answers any bad request — a 400 with the API's error body — instead
 * of Node's bare 400, and close the connection (the parser cannot find the next request).
 */
function answerClientError(clock: Clock, error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const requestId = newId('request', clock.now());
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const body = JSON.stringify({
    error: tooLarge
      ? { code: 'PAYLOAD_TOO_LARGE', message: 'Request headers are too large' }
      : { code: 'INVALID_REQUEST', message: 'The request is not valid HTTP (method, path or headers)' },
    meta: { timestamp: isoNow(clock), requestId },
  });
  socket.end(
    `HTTP/1.1 ${tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Local mode's HTTP server over an app's fetch; resolves once it listens. */
export async function startHttpServer(fetch: (request: Request) => Response | Promise<Response>, options: { port: number; hostname: string; clock: Clock }): Promise<ServerType> {
  const server = serve({ fetch, port: options.port, hostname: options.hostname });
  server.on('clientError', (error: Error & { code?: string }, socket: Socket) => answerClientError(options.clock, error, socket));
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  return server;
}
