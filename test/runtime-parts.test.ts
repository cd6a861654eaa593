import { describe, expect, it } from 'vitest';
import { createAgentsApp } from '../functions/agents/app';
import { createPlatformApp } from '../functions/platform/app';
import { configuredRuntime } from '../shared/configured-runtime';
import { handleIngestionMessage } from '../shared/knowledge';
import { consumeWorkflowMessage } from '../shared/workflows';
import { call } from './helpers/http';
import { testRt } from './helpers/runtime';

/**
 * Each function's entry declares the runtime parts it needs (`RuntimeWith<…>`): an entry whose
 * runtime was built without one of them does not compile. `npm test` type-checks this file first,
 * so each `@ts-expect-error` below fails the run the day that check stops biting.
 */
describe('the runtime parts each entry needs', () => {
  const { models, secrets, queues, blobs } = testRt;

  it('are checked when an entry is compiled', () => {
    const forgetful = [
      // @ts-expect-error the agents app needs the queues too (tools that run workflows)
      () => createAgentsApp(configuredRuntime({ models, secrets })),
      // @ts-expect-error the platform app needs API Gateway's part, the scheduler and the platform secrets
      () => createPlatformApp(configuredRuntime({ secrets })),
      // @ts-expect-error the steps worker needs agent turns (workflow `agent` steps)
      (message: Parameters<typeof consumeWorkflowMessage>[1]) => consumeWorkflowMessage(configuredRuntime({ models, secrets, queues }), message, { receiveCount: 1, maxReceives: 5 }),
      // @ts-expect-error ingestion needs the blobs (files' content)
      (message: Parameters<typeof handleIngestionMessage>[1]) => handleIngestionMessage(configuredRuntime({ models, secrets, queues }), message, { receiveCount: 1, maxReceives: 5 }),
    ];
    expect(forgetful).toHaveLength(4);
  });

  it('builds an entry given every part it declares, which then serves', async () => {
    const app = createAgentsApp(configuredRuntime({ store: testRt.store, models, secrets, queues, blobs, code: undefined }));
    const res = await call(app, 'GET', '/v1/agents');
    expect(res.status).toBe(401);
  });
});
