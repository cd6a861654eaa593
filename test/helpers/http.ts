export interface Fetchable {
  request(input: string, init?: RequestInit): Response | Promise<Response>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** One request through an app (no sockets), JSON in and out. */
export async function call(
  app: Fetchable,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<TestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers['x-api-key'] = options.key;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  if (body !== undefined) headers['content-length'] ??= String(Buffer.byteLength(body));
  const res = await app.request(`http://localhost${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** The API's error body of a response (`{error: {code, message, details}, meta}`). */
export async function errorOf(res: Response): Promise<{ code: string; message: string; details?: Record<string, unknown> }> {
  return ((await res.json()) as { error: { code: string; message: string; details?: Record<string, unknown> } }).error;
}
