import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { KMSClient } from '@aws-sdk/client-kms';
import { loadOnce } from '../load-once';

/** The SDK's KMS module, loaded with the first secret sealed or opened, not at a cold start. */
export const kmsSdk = loadOnce(() => import('@aws-sdk/client-kms'));

/**
 * Envelope encryption for stored secrets (PostgreSQL credentials): each secret gets its own
 * AES-256-GCM data key; the data key is wrapped by KMS in AWS, or by a local key (a key file in
 * DATA_DIR) in local mode. The tenant and source are bound as additional authenticated data, so a
 * sealed secret copied to another source does not open.
 */
export interface SealedSecret {
  v: 1;
  wrap: 'kms' | 'local';
  /** The wrapped data key. */
  key: string;
  iv: string;
  tag: string;
  data: string;
}

export interface KeyWrapper {
  kind: SealedSecret['wrap'];
  generate(context: Record<string, string>): Promise<{ plaintext: Buffer; wrapped: Buffer }>;
  unwrap(wrapped: Buffer, context: Record<string, string>): Promise<Buffer>;
}

function gcm(key: Buffer, plaintext: Buffer, aad: Buffer) {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  const data = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv, data, tag: cipher.getAuthTag() };
}

function ungcm(key: Buffer, sealed: { iv: Buffer; data: Buffer; tag: Buffer }, aad: Buffer): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.iv);
  decipher.setAAD(aad);
  decipher.setAuthTag(sealed.tag);
  return Buffer.concat([decipher.update(sealed.data), decipher.final()]);
}

const aadOf = (context: Record<string, string>) =>
  Buffer.from(JSON.stringify(Object.entries(context).sort(([a], [b]) => (a < b ? -1 : 1))));

export function localKeyWrapper(masterKey: Buffer): KeyWrapper {
  if (masterKey.length !== 32) throw new Error('the local secrets key must be 32 bytes');
  return {
    kind: 'local',
    async generate(context) {
      const plaintext = randomBytes(32);
      const { iv, data, tag } = gcm(masterKey, plaintext, aadOf(context));
      return { plaintext, wrapped: Buffer.concat([iv, tag, data]) };
    },
    async unwrap(wrapped, context) {
      return ungcm(masterKey, { iv: wrapped.subarray(0, 12), tag: wrapped.subarray(12, 28), data: wrapped.subarray(28) }, aadOf(context));
    },
  };
}

/** Data keys from KMS; the SDK's KMS client is loaded and made on first use (`client` makes it). */
export function kmsKeyWrapper(client: () => Promise<KMSClient>, keyId: string): KeyWrapper {
  return {
    kind: 'kms',
    async generate(context) {
      const { GenerateDataKeyCommand } = await kmsSdk();
      const out = await (await client()).send(new GenerateDataKeyCommand({ KeyId: keyId, KeySpec: 'AES_256', EncryptionContext: context }));
      return { plaintext: Buffer.from(out.Plaintext!), wrapped: Buffer.from(out.CiphertextBlob!) };
    },
    async unwrap(wrapped, context) {
      const { DecryptCommand } = await kmsSdk();
      const out = await (await client()).send(new DecryptCommand({ CiphertextBlob: wrapped, EncryptionContext: context, KeyId: keyId }));
      return Buffer.from(out.Plaintext!);
    },
  };
}

/** Seals and opens stored secrets with one key wrapper (KMS in AWS, a local key elsewhere). */
export interface SecretBox {
  seal(plaintext: string, context: Record<string, string>): Promise<SealedSecret>;
  open(sealed: SealedSecret, context: Record<string, string>): Promise<string>;
}

export function secretBox(wrapper: KeyWrapper): SecretBox {
  return {
    async seal(plaintext, context) {
      const dataKey = await wrapper.generate(context);
      const { iv, data, tag } = gcm(dataKey.plaintext, Buffer.from(plaintext, 'utf8'), aadOf(context));
      dataKey.plaintext.fill(0);
      const b64 = (b: Buffer) => b.toString('base64');
      return { v: 1, wrap: wrapper.kind, key: b64(dataKey.wrapped), iv: b64(iv), tag: b64(tag), data: b64(data) };
    },
    async open(sealed, context) {
      if (sealed.wrap !== wrapper.kind) throw new Error(`secret was sealed with ${sealed.wrap}, this process has ${wrapper.kind}`);
      const b = (s: string) => Buffer.from(s, 'base64');
      const key = await wrapper.unwrap(b(sealed.key), context);
      try {
        return ungcm(key, { iv: b(sealed.iv), tag: b(sealed.tag), data: b(sealed.data) }, aadOf(context)).toString('utf8');
      } finally {
        key.fill(0);
      }
    },
  };
}

/** A box for a runtime that has no secrets key: using it says what to configure. */
export function missingSecretBox(): SecretBox {
  const fail = async (): Promise<never> => {
    throw new Error('No secrets key: set SECRETS_KMS_KEY_ID (AWS) or start in local mode');
  };
  return { seal: fail, open: fail };
}
