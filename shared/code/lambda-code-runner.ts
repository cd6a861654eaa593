import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { UpstreamError } from '../errors';
import type { CodeResult, CodeRunner } from './code-job';

/**
 * The code runner in AWS: each job is one synchronous invocation of the code-runner function,
 * which has no permission beyond its logs, no secrets in its environment and no need of a network;
 * its bundle alone carries QuickJS. A failed invocation (throttled, the function crashed) is a
 * retryable upstream error; what the code itself did comes back as the job's result.
 */
export function lambdaCodeRunner(functionName: string, client = new LambdaClient({})): CodeRunner {
  return {
    async run(job) {
      const out = await client.send(new InvokeCommand({ FunctionName: functionName, Payload: Buffer.from(JSON.stringify(job)) })).catch((error: unknown) => {
        throw new UpstreamError(`The code runner could not be invoked (${(error as Error).name})`, { reason: 'code-runner' }, { retryable: true });
      });
      const text = out.Payload ? Buffer.from(out.Payload).toString('utf8') : '';
      if (out.FunctionError) throw new UpstreamError(`The code runner failed (${out.FunctionError})`, { reason: 'code-runner' }, { retryable: true });
      return JSON.parse(text) as CodeResult;
    },
  };
}
