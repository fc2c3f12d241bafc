import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Encrypts secrets the console must be able to use again (agent keys, webhook secrets): AES-256-GCM. */
export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
}

const VERSION = 'v1';

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error('the secret key must be 32 bytes');
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [
        VERSION,
        iv.toString('base64url'),
        cipher.getAuthTag().toString('base64url'),
        data.toString('base64url'),
      ].join('.');
    },
    open(sealed) {
      const [version, iv, tag, data] = sealed.split('.');
      if (version !== VERSION || !iv || !tag || data === undefined) throw new Error('not a sealed secret');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

/** Where the key lives in the data dir when PALISADE_SECRET_KEY is not set. */
export const secretKeyFile = (dataDir: string) => join(dataDir, 'secret.key');

/** The data dir's key file, or null when there is none; a file that is not 64 hex characters is an error naming it. */
export function readSecretKeyFile(dataDir: string): Buffer | null {
  const file = secretKeyFile(dataDir);
  if (!existsSync(file)) return null;
  const hex = readFileSync(file, 'utf8').trim();
  if (!/^[0-9a-fA-F]{64}$/.test(hex))
    throw new Error(`${file} does not hold 64 hex characters; restore it or set PALISADE_SECRET_KEY`);
  return Buffer.from(hex, 'hex');
}

/** Writes the data dir's key file, made new with mode 0600 (O_EXCL: an existing file or a link there fails with EEXIST). */
export function writeSecretKeyFile(dataDir: string, key: Buffer) {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(secretKeyFile(dataDir), key.toString('hex'), { mode: 0o600, flag: 'wx' });
}

/** PALISADE_SECRET_KEY when set; otherwise a key file made once in the data dir (mode 0600). */
export function loadSecretKey(configured: Buffer | null, dataDir: string): Buffer {
  if (configured) return configured;
  const existing = readSecretKeyFile(dataDir);
  if (existing) return existing;
  try {
    writeSecretKeyFile(dataDir, randomBytes(32));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err; // another process made it first
  }
  return readSecretKeyFile(dataDir)!;
}
