import { Agent, request } from 'node:http';

export interface LoadResult {
  requests: number;
  seconds: number;
  throughput: number;
  p50: number;
  p99: number;
  errors: number;
}

/**
 * A closed-loop load generator: `concurrency` keep-alive connections each send the next request
 * as soon as the previous answer arrives, until `total` requests are done. Latencies in ms.
 */
export async function load(options: {
  port: number;
  total: number;
  concurrency: number;
  make: (i: number) => { method: string; path: string; headers?: Record<string, string>; body?: string };
  /** The status (or statuses) a right answer has; any other counts as an error. */
  expectStatus: number | readonly number[];
}): Promise<LoadResult> {
  const expected = new Set(typeof options.expectStatus === 'number' ? [options.expectStatus] : options.expectStatus);
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  const one = (i: number) =>
    new Promise<void>((resolve) => {
      const spec = options.make(i);
      // A body's length is declared, as fetch, curl and the SDKs declare it (not sent chunked).
      const headers = spec.body === undefined ? spec.headers : { 'content-length': String(Buffer.byteLength(spec.body)), ...spec.headers };
      const started = performance.now();
      const req = request(
        { host: '127.0.0.1', port: options.port, method: spec.method, path: spec.path, headers, agent },
        (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(performance.now() - started);
            if (!expected.has(res.statusCode ?? 0)) errors++;
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      if (spec.body) req.write(spec.body);
      req.end();
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (next < options.total) await one(next++);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return {
    requests: latencies.length,
    seconds: Math.round(seconds * 100) / 100,
    throughput: Math.round(latencies.length / seconds),
    p50: Math.round(at(0.5) * 100) / 100,
    p99: Math.round(at(0.99) * 100) / 100,
    errors,
  };
}
