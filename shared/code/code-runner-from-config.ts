import { config } from '../config';
import { onFirstUse } from '../load-once';
import type { CodeRunner } from './code-job';

// The Lambda client loads with the first job, not at a cold start.
const lambda = onFirstUse(() => import('./lambda-code-runner'));

/** The code-runner function named by CODE_RUNNER_FUNCTION (AWS), or none (the function then has no code to run). */
export function codeRunnerFromConfig(): CodeRunner | undefined {
  const name = config.codeRunnerFunction;
  if (!name) return undefined;
  let runner: CodeRunner | undefined;
  return { run: async (job) => (runner ??= (await lambda()).lambdaCodeRunner(name)).run(job) };
}
