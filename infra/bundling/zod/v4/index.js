// `zod/v4`
import * as z4 from '../classic.js';
export * from '../classic.js';
export { z4 as default };
