// What the Lambda bundles import for `ajv` (see README.md): nothing of it. Cairn gives every MCP
// client and server the SDK's @cfworker/json-schema validator, so the SDK's default Ajv is never built.
export default class Ajv {
  constructor() {
    throw new Error('ajv is left out of this bundle: give the MCP client or server a jsonSchemaValidator (mcpJsonSchemaValidator, shared/tools)');
  }
}
