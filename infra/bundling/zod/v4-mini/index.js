// `zod/v4-mini`
import * as z from '../mini.js';
export * from '../mini.js';
export { z };
