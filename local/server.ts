import { config } from '../shared/config';
import { log } from '../shared/log';
import { createDb } from '../shared/store/db';
import { localCredentials, localSecretsKey } from './credentials';
import { ensureDevTenant } from './dev-tenant';
import { startHttpServer } from './http-server';
import { freePort } from './free-port';
import { createLocalApp } from './local-app';
import { localRuntime } from './local-runtime';
import { openLocalStore } from './local-store';
import { startS3Local } from './s3-local';
import { blobsFromConfig } from '../shared/blobs/s3-blobs';

const LOCAL_BUCKET = 'cairn-local';

/** `npm start`: every route group on one port against DynamoDB Local (and files in a local S3). */
async function main() {
  const store = await openLocalStore('server');
  const dataDir = config.dataDir === ':memory:' ? undefined : config.dataDir;

  const credentials = localCredentials(dataDir, {
    devApiKey: config.devApiKey,
    platformAdminToken: config.platformAdminToken,
    platformTokenKey: config.platformTokenKey,
    cursorKey: config.cursorSigningKey,
  });
  // Files' content goes to S3: a configured endpoint and bucket, else an S3-compatible server of our own.
  const s3 = config.s3Endpoint && config.blobBucket ? undefined : await startS3Local({ dataDir, buckets: [LOCAL_BUCKET] });
  // The API's own port is known before the runtime is made (PORT=0 picks one now), so the guard refuses it too.
  const port = config.port || (await freePort());
  const local = localRuntime({
    blobs: s3 ? blobsFromConfig({ endpoint: s3.endpoint, bucket: LOCAL_BUCKET }) : blobsFromConfig(),
    db: createDb({ endpoint: store.endpoint, cursorKey: credentials.cursorKey }),
    secretsKey: localSecretsKey(dataDir),
    platformSecrets: { adminToken: credentials.platformAdminToken, tokenKey: credentials.platformTokenKey },
    // This server, and the DynamoDB Local and S3 it started: no tenant's URL may reach them, whatever the allow-list says.
    ownServices: [`localhost:${port}`, store.endpoint, ...(s3 ? [s3.endpoint] : [])],
  });
  const { rt } = local;
  await ensureDevTenant(rt, credentials.devApiKey, config.devApiKeyPlan);
  // Work queued before a crash resumes now; with its own DynamoDB Local this process alone serves
  // the data, so messages still taken were taken by a dead run and need not wait for their leases.
  await local.start({ releaseTaken: !config.dynamodbEndpoint, sweepEveryMs: Math.min(60_000, config.sweepAfterMs), scheduleEveryMs: 1_000 });

  const server = await startHttpServer(createLocalApp(rt).fetch, { port, hostname: '0.0.0.0', clock: rt.clock });
  const base = `http://localhost:${port}`;
  process.stdout.write(
    [
      '',
      `Cairn is running at ${base}`,
      `  Console         ${base}/console   (sign in with the DEV_API_KEY below)`,
      `  Public API      ${base}/v1   (header X-API-Key)`,
      `  API reference   ${base}/v1/docs`,
      `  MCP server      ${base}/mcp   (Streamable HTTP; the API key as X-API-Key or Authorization: Bearer)`,
      `  Platform API    ${base}/platform   (Authorization: Bearer <access token>; OpenAPI at /platform/openapi.json)`,
      `  Health          ${base}/healthz`,
      `  DynamoDB        ${store.endpoint} (${store.description})`,
      `  S3 (files)      ${s3 ? `${s3.endpoint} (bucket ${LOCAL_BUCKET})` : `${config.s3Endpoint} (bucket ${config.blobBucket})`}`,
      '',
      `  DEV_API_KEY=${credentials.devApiKey}   (plan ${config.devApiKeyPlan})`,
      `  PLATFORM_ADMIN_TOKEN=${credentials.platformAdminToken}   (for /platform/tenants)`,
      '',
      `  Try: curl -s ${base}/v1/agents -H "X-API-Key: ${credentials.devApiKey}"`,
      '',
    ].join('\n') + '\n',
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    await new Promise<void>((resolve) => server.close(() => resolve()));
    // Work in hand finishes; work still queued is stored and resumes at the next start.
    await Promise.race([local.stop(), new Promise((resolve) => setTimeout(resolve, 5000))]);
    await store.close();
    await s3?.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  process.stderr.write(`Cairn could not start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
