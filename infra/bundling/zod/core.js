// zod's core, without its locales (see README.md).
export * from '../../../node_modules/zod/v4/core/index.js';
export const locales = {};
