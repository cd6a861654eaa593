import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/dynamodb.ts'],
    setupFiles: ['test/setup/store.ts'],
    env: { LOG_LEVEL: 'silent', TABLE_NAME: 'cairn-test' },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores here: more workers only contend for them and for DynamoDB Local.
    maxWorkers: 2,
  },
});
