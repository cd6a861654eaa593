// zod's classic API (what `import { z } from 'zod'` gives), with the core above and no locales.
export * from '../../../node_modules/zod/v4/classic/external.js';
import * as core from './core.js';
export { core };
export const locales = {};
