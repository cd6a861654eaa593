// `zod`
import * as z from './classic.js';
export * from './classic.js';
export { z, z as default };
