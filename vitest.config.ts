import { defineConfig } from 'vitest/config';

// The global setup (DynamoDB Local, S3) runs in this process, where `test.env` does not apply: the
// SDK's notice that it will need Node 22 in 2027 is turned off here too.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

export default defineConfig({
  test: {
    // Tests live in test/, and middleware is tested beside itself (shared/http/middleware/).
    include: ['test/**/*.test.ts', 'shared/**/*.test.ts'],
    globalSetup: ['test/setup/services.ts'],
    setupFiles: ['test/setup/env.ts'],
    // The SDK's notice that it will need Node 22 in 2027 would repeat in every worker.
    env: { LOG_LEVEL: 'silent', TABLE_NAME: 'cairn-test', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores here: more workers only contend for them and for DynamoDB Local.
    maxWorkers: 2,
  },
});
