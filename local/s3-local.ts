import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { killWithThisProcess, startWatchdog, stopChild, waitUntilReady } from './child-services';
import { freePort } from './free-port';

export interface RunningS3 {
  endpoint: string;
  stop(): Promise<void>;
}

/**
 * An S3-compatible server (s3rver) in a process of its own, as DynamoDB Local is for the table:
 * files keep their content under `dataDir/s3` (or a temporary folder removed at stop), and the
 * product talks to it with the AWS SDK's S3 client exactly as it talks to S3. It accepts one fixed
 * key (S3RVER) and does not check signatures. Its own process, so serving files does not take the
 * event loop of the server or worker reading them.
 */
export async function startS3Local(options: { dataDir?: string; buckets: string[] }): Promise<RunningS3> {
  const directory = options.dataDir ? resolve(options.dataDir, 's3') : mkdtempSync(join(tmpdir(), 'cairn-s3-'));
  mkdirSync(directory, { recursive: true });
  const port = await freePort();
  const bin = createRequire(import.meta.url).resolve('s3rver/bin/s3rver.js');
  // Each bucket takes browsers' PUTs to presigned URLs (CORS), as the deployed Files bucket does.
  const cors = fileURLToPath(new URL('./s3-cors.xml', import.meta.url));
  const buckets = options.buckets.flatMap((name) => ['--configure-bucket', name, cors]);
  const child = spawn(process.execPath, [bin, '-d', directory, '-a', '127.0.0.1', '-p', String(port), '--silent', ...buckets], { stdio: 'ignore' });
  killWithThisProcess(child);
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady('s3rver', endpoint, child, 30_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  // The watchdog ends the server if this process dies unannounced, and ends itself with the server.
  startWatchdog(child.pid!);
  return {
    endpoint,
    async stop() {
      await stopChild(child, 3000);
      if (!options.dataDir) rmSync(directory, { recursive: true, force: true });
    },
  };
}
