import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { LocalStorage } from './local-storage.ts';
import type { ObjectStorage } from './object-storage.ts';
import { S3Storage } from './s3-storage.ts';
import type { LocalStorageConfig, StorageConfig } from './storage-config.ts';

/**
 * The backend the config names. `publicUrl` overrides the configured base of local signed URLs, for a
 * server that learns its address only once listening (port 0).
 */
export async function createObjectStorage(
  config: StorageConfig,
  o: {
    publicUrl?: () => string;
    /** Told what the S3 checksum probe found (the service logs it). */
    onChecksumProbe?: (verifies: boolean, detail: string) => void;
  } = {},
): Promise<LocalStorage | S3Storage> {
  if (config.kind === 's3') {
    return new S3Storage({
      bucket: config.bucket,
      region: config.region,
      endpoint: config.endpoint,
      forcePathStyle: config.forcePathStyle,
      credentials: config.credentials,
      checksums: config.checksums,
      ...(o.onChecksumProbe ? { onChecksumProbe: o.onChecksumProbe } : {}),
    });
  }
  const secret = config.secret !== undefined ? Buffer.from(config.secret) : await persistentSecret(config);
  return LocalStorage.open({ dir: config.dir, secret, publicUrl: o.publicUrl ?? config.publicUrl });
}

/** 32 random bytes made on first start and kept (mode 600), so signed URLs outlive a restart. */
async function persistentSecret(config: LocalStorageConfig): Promise<Buffer> {
  await mkdir(path.dirname(config.secretFile), { recursive: true, mode: 0o700 });
  // Written aside and hard-linked into place: of two processes starting at once, one wins whole and the other
  // reads it.
  const tmp = `${config.secretFile}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(tmp, randomBytes(32).toString('hex') + '\n', { flag: 'wx', mode: 0o600 });
  try {
    await link(tmp, config.secretFile);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await rm(tmp, { force: true });
  }
  const secret = Buffer.from((await readFile(config.secretFile, 'utf8')).trim(), 'hex');
  if (secret.length < 32)
    throw new Error(`${config.secretFile} does not hold a 32-byte hex secret; delete it to make a new one`);
  return secret;
}

export type { ObjectStorage };
