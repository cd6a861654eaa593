// `zod/v3`, as it is (it has no locales).
export * from '../../../../node_modules/zod/v3/index.js';
export { default } from '../../../../node_modules/zod/v3/index.js';
