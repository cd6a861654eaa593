// `zod/v3` in the bundles: nothing of it (see README.md). Only the MCP SDK imports it, to build an
// object of zod 3 schemas when a tool's are all zod 3; every schema Cairn gives it is zod 4.
export function object() {
  throw new Error('zod 3 is left out of this bundle: give the MCP SDK zod 4 schemas');
}
export default { object };
