import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker';

/**
 * The JSON Schema validator every MCP client and server of Cairn is given (tool output schemas,
 * elicitation forms): @cfworker/json-schema, the SDK's lighter option. Without one the SDK builds
 * Ajv, which the Lambda bundles leave out (infra/bundling/ajv/README.md).
 */
export const mcpJsonSchemaValidator = () => new CfWorkerJsonSchemaValidator();
