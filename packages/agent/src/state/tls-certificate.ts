import { generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { ipaddr } from '../lib/ipaddr.js';
import { readStateFile, writeFileAtomic } from './state-dir.js';

// A minimal DER writer: just the ASN.1 a self-signed X.509 v3 certificate needs.
function tlv(tag: number, content: Buffer): Buffer {
  const n = content.length;
  let len: Buffer;
  if (n < 0x80) len = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let rest = n; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
    len = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), len, content]);
}
const seq = (...parts: Buffer[]) => tlv(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]) => tlv(0x31, Buffer.concat(parts));
const explicit = (n: number, inner: Buffer) => tlv(0xa0 + n, inner);
const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));
const octets = (b: Buffer) => tlv(0x04, b);
const bits = (b: Buffer) => tlv(0x03, Buffer.concat([Buffer.from([0]), b]));
/**
 * A DER INTEGER of the unsigned big-endian bytes: minimal, as DER requires (leading zero bytes
 * dropped, one put back when the high bit would read as a sign). A random serial starting with
 * 0x00 made OpenSSL refuse the certificate ("illegal padding") about once in 256 starts.
 */
export function derInteger(b: Buffer): Buffer {
  let start = 0;
  while (start < b.length - 1 && b[start] === 0) start++;
  const bytes = b.subarray(start);
  return tlv(0x02, bytes[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}
const integer = derInteger;
function oid(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split('.').map(Number);
  const out = [40 * a + b];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}
function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').slice(0, 14); // YYYYMMDDHHMMSS
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${iso}Z`));
}

const ECDSA_SHA256 = '1.2.840.10045.4.3.2';
const COMMON_NAME = '2.5.4.3';
const SUBJECT_ALT_NAME = '2.5.29.17';

/** A self-signed ECDSA P-256 certificate valid for ten years, for the names and addresses given. */
export function selfSignedCertificate(
  commonName: string,
  dnsNames: string[],
  ips: string[],
  now = new Date(),
): { keyPem: string; certPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const algorithm = seq(oid(ECDSA_SHA256));
  const name = seq(set(seq(oid(COMMON_NAME), utf8(commonName))));
  const altNames = seq(
    ...dnsNames.filter((n) => /^[\x21-\x7e]+$/.test(n)).map((n) => tlv(0x82, Buffer.from(n, 'ascii'))),
    ...ips.map((ip) => tlv(0x87, Buffer.from(ipaddr.parse(ip).toByteArray()))),
  );
  const notBefore = new Date(now.getTime() - 60 * 60_000);
  const notAfter = new Date(now.getTime() + 10 * 365 * 24 * 3600_000);
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f;
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial),
    algorithm,
    name,
    seq(time(notBefore), time(notAfter)),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, seq(seq(oid(SUBJECT_ALT_NAME), octets(altNames)))),
  );
  const signature = sign('sha256', tbs, privateKey);
  const der = seq(tbs, algorithm, bits(signature));
  const body = der
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .trim();
  return {
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    certPem: `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`,
  };
}

export interface TlsMaterial {
  key: string;
  cert: string;
  /** SHA-256 of the certificate, colon-separated hex, as `openssl x509 -fingerprint -sha256` prints it. */
  fingerprint: string;
  created: boolean;
}

/** The agent's certificate: made on first use and kept in the state dir; only the private key is secret. */
export function ensureTlsCertificate(paths: { tlsKey: string; tlsCert: string }, hostname: string): TlsMaterial {
  let created = false;
  if (!existsSync(paths.tlsKey) || !existsSync(paths.tlsCert)) {
    const { keyPem, certPem } = selfSignedCertificate(
      `palisade-agent ${hostname}`,
      [hostname, 'localhost'],
      ['127.0.0.1', '::1'],
    );
    writeFileAtomic(paths.tlsKey, keyPem, 0o600);
    writeFileAtomic(paths.tlsCert, certPem, 0o644);
    created = true;
  }
  const key = readStateFile(paths.tlsKey);
  const cert = readStateFile(paths.tlsCert);
  return { key, cert, fingerprint: new X509Certificate(cert).fingerprint256, created };
}

/** The fingerprint of an existing certificate, or null when none was made yet. */
export function tlsFingerprint(certFile: string): string | null {
  if (!existsSync(certFile)) return null;
  return new X509Certificate(readStateFile(certFile)).fingerprint256;
}
