// What the steps worker loads from evaluations with its first evaluation case: named here so that
// loading it with import() takes this, not all the room exports.
export { consumeEvalCase } from './evals';
