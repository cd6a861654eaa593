// zod/v4-mini, with the core above and no locales.
export * from '../../../node_modules/zod/v4/mini/external.js';
import * as core from './core.js';
export { core };
export const locales = {};
