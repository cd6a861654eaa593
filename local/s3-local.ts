import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import S3rver from 's3rver';

export interface RunningS3 {
  endpoint: string;
  stop(): Promise<void>;
}

/**
 * An S3-compatible server in this process (s3rver), as DynamoDB Local is for the table: files keep
 * their content under `dataDir/s3` (or a temporary folder removed at stop), and the product talks
 * to it with the AWS SDK's S3 client exactly as it talks to S3. It does not check signatures.
 */
export async function startS3Local(options: { dataDir?: string; buckets: string[] }): Promise<RunningS3> {
  const directory = options.dataDir ? resolve(options.dataDir, 's3') : mkdtempSync(join(tmpdir(), 'cairn-s3-'));
  mkdirSync(directory, { recursive: true });
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: options.buckets.map((name) => ({ name, configs: [] })) });
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async stop() {
      await server.close();
      if (!options.dataDir) rmSync(directory, { recursive: true, force: true });
    },
  };
}
