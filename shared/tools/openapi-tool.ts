import { AppError, ValidationError, OpenApiProblem, ToolFailure } from '../errors';
import { outboundRequest } from '../net/outbound';
import { templateText } from '../templates';
import { sendToolRequest, urlArgument } from './http-tool';
import { compileOpenApi, type OpenApiOperation } from './openapi-operations';
import { MAX_EXPOSED, MAX_STORED_BYTES, type OpenApiDefinition, type Stored } from './definitions';
import { toolAuthorization } from './tool-auth';
import { type ToolKind } from './tool-kind';

/**
 * `openapi`: the operations of an OpenAPI 3.x document (inline, or read from a URL when the agent is
 * written) become tools, `<name>_<operationId>`, limited to an allow-list when one is given. The
 * document is read into operations once, when the agent is written: a changed document is picked
 * up by writing the agent again.
 */
const MAX_DOCUMENT_BYTES = 2 * 1024 * 1024;

type OpenApiTool = Stored<OpenApiDefinition> & { compiled: OpenApiOperation[] };

/** The document the tool names: inline, or read through the outbound guard and parsed as JSON or YAML. */
async function documentOf(tool: OpenApiDefinition, at: string, policy: Parameters<typeof outboundRequest>[2]): Promise<unknown> {
  if (tool.document) return tool.document;
  const field = `${at}.url`;
  let text: string;
  try {
    const response = await outboundRequest(tool.url!, { headers: { accept: 'application/json, application/yaml;q=0.9, */*;q=0.5' }, maxBytes: MAX_DOCUMENT_BYTES }, policy);
    if (response.status !== 200) throw new ValidationError(field, `could not be read: HTTP ${response.status}`);
    if (response.truncated) throw new ValidationError(field, `holds a document larger than ${MAX_DOCUMENT_BYTES} bytes`);
    text = response.body.toString('utf8');
  } catch (error) {
    if (error instanceof ValidationError || !(error instanceof AppError)) throw error;
    throw new ValidationError(field, `could not be read: ${error.message}`);
  }
  let document: unknown;
  try {
    // YAML 1.2 is a superset of JSON: one parser reads both. Loaded when first needed (agents are written far less often than they answer).
    const { load } = await import('js-yaml');
    document = load(text);
  } catch (error) {
    throw new ValidationError(field, `does not hold JSON or YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  if (sharesValues(document)) throw new ValidationError(field, 'uses YAML anchors and aliases, which are not read (they can expand a small file into an enormous document): write the document out in full');
  return document;
}

/** Whether a parsed document holds one object in two places, as YAML aliases make it. */
function sharesValues(document: unknown): boolean {
  const seen = new Set<object>();
  const stack: unknown[] = [document];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value !== 'object' || value === null) continue;
    if (seen.has(value)) return true;
    seen.add(value);
    stack.push(...(Object.values(value) as unknown[]));
  }
  return false;
}

function urlOf(operation: OpenApiOperation, args: Record<string, unknown>): string {
  let path = operation.path;
  const query = new URLSearchParams();
  for (const param of operation.params) {
    const value = args[param.arg];
    if (value === undefined) continue;
    if (param.in === 'path') path = path.split(`{${param.name}}`).join(urlArgument(param.arg, templateText(value)));
    else if (param.in === 'query') for (const item of Array.isArray(value) ? value : [value]) query.append(param.name, templateText(item));
  }
  const search = query.toString();
  return `${operation.server}${path}${search ? `?${search}` : ''}`;
}

function headersOf(operation: OpenApiOperation, args: Record<string, unknown>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const param of operation.params) {
    if (param.in !== 'header' || args[param.arg] === undefined) continue;
    const value = templateText(args[param.arg]);
    if (/[\r\n]/.test(value)) throw new ToolFailure(`invalid arguments: ${param.arg} cannot contain a line break`, { invalidArguments: true });
    headers[param.name.toLowerCase()] = value;
  }
  return headers;
}

export const openApiTool: ToolKind<OpenApiDefinition, OpenApiTool> = {
  type: 'openapi',
  present: ({ compiled, ...shown }) => ({ ...shown, exposes: compiled.map((o) => ({ name: o.name, operationId: o.operationId, method: o.method, path: o.path })) }),
  async prepare(_rt, _scope, tool, at, { policy }) {
    const document = await documentOf(tool, at, policy);
    let compiled: OpenApiOperation[];
    try {
      compiled = compileOpenApi(document, { prefix: tool.name, allow: tool.operations, documentUrl: tool.url, baseUrl: tool.baseUrl, max: MAX_EXPOSED });
    } catch (error) {
      if (!(error instanceof OpenApiProblem)) throw error;
      // A problem inside a document read from a URL is the URL's.
      throw new ValidationError(`${at}.${tool.url && error.field.startsWith('document') ? 'url' : error.field}`, error.message);
    }
    if (Buffer.byteLength(JSON.stringify(compiled)) > MAX_STORED_BYTES) throw new ValidationError(`${at}.operations`, 'names operations too large to keep together: list fewer');
    // The auth is sealed by the caller; what responses showed is not kept.
    const { exposes: _shown, auth: _auth, ...definition } = tool;
    return { ...definition, compiled };
  },
  expose: (tool) =>
    tool.compiled.map((operation) => ({
      name: operation.name,
      description: operation.description,
      parameters: operation.parameters,
      requireApproval: tool.requireApproval,
      ...(tool.policy ? { policy: tool.policy } : {}),
      async call(args, context) {
        const authorization = await toolAuthorization(context, tool.name, tool.auth);
        return sendToolRequest(urlOf(operation, args), { method: operation.method, headers: headersOf(operation, args), body: operation.bodyArg ? args[operation.bodyArg] : undefined, authorization }, context);
      },
    })),
};

