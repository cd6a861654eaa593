import { config } from '../config';
import type { CodeRunner } from './code-job';
import { lambdaCodeRunner } from './lambda-code-runner';

/** The code-runner function named by CODE_RUNNER_FUNCTION (AWS), or none (the function then has no code to run). */
export const codeRunnerFromConfig = (): CodeRunner | undefined => (config.codeRunnerFunction ? lambdaCodeRunner(config.codeRunnerFunction) : undefined);
