// What the Lambda bundles import for `zod-to-json-schema` (see ../zod/README.md): nothing of it. The
// MCP SDK converts zod 3 schemas with it and zod 4 ones with zod's own toJSONSchema; Cairn's are zod 4.
export function zodToJsonSchema() {
  throw new Error('zod-to-json-schema is left out of this bundle: give the MCP SDK zod 4 schemas');
}
export default zodToJsonSchema;
