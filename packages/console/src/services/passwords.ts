import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { PASSWORD_COST_DEFAULT, PASSWORD_COST_MAX } from '../config.js';

// scrypt with N = 2^cost (PALISADE_PASSWORD_COST, docs/console.md), r=8, p=1.
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
/** 128 × r × N bytes at the highest cost, with room: Node's default maxmem (32 MiB) would refuse 2^17. */
const MAXMEM = 2 * 128 * R * 2 ** PASSWORD_COST_MAX;

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { N: n, r, p, maxmem: MAXMEM }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/**
 * The stored hash of a person without a password (made by single sign-on): no password verifies
 * against it (verifyPassword answers false), as for the teams' placeholder rows.
 */
export const NO_PASSWORD = '';

/** `scrypt$<log2 N>$<r>$<p>$<salt>$<hash>`, base64url parts; the parameters travel with the hash. */
export async function hashPassword(password: string, cost = PASSWORD_COST_DEFAULT): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, 2 ** cost, R, P);
  return ['scrypt', cost, R, P, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, logN, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !logN || !r || !p || !salt || !hash) return false;
  const cost = Number(logN);
  if (!Number.isInteger(cost) || cost < 1 || cost > PASSWORD_COST_MAX) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), 2 ** cost, Number(r), Number(p));
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** True when a stored hash was made with less work than `cost` asks: it is made again at the next sign-in. */
export function weakerThan(stored: string, cost: number): boolean {
  const [scheme, logN] = stored.split('$');
  return scheme !== 'scrypt' || Number(logN) < cost;
}

/** A hash of a random password at this cost, verified against when the email is unknown so both paths cost the same. */
const decoys = new Map<number, Promise<string>>();
export function decoyHash(cost = PASSWORD_COST_DEFAULT): Promise<string> {
  let decoy = decoys.get(cost);
  if (!decoy) {
    decoy = hashPassword(randomBytes(24).toString('base64url'), cost);
    decoys.set(cost, decoy);
  }
  return decoy;
}
