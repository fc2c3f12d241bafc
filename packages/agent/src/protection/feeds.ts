// Blocklist feeds: plain IP/CIDR lists with comments (FireHOL netsets, Spamhaus DROP).
import http from 'node:http';
import { type Network, readNetwork, refuseEverything } from '../lib/net.js';

/**
 * One entry per line; `#` and `;` start comments; anything after the first word is ignored. A line
 * the strict parser refuses (`010.0.0.1`, `1.2.3`) and a /0, which would block everything, count as invalid.
 */
export function parseFeed(text: string): { networks: Network[]; invalid: number } {
  const networks: Network[] = [];
  let invalid = 0;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    if (line === '') continue;
    const net = readNetwork(line.split(/\s+/)[0]!);
    if (net && !refuseEverything(net)) networks.push(net);
    else invalid++;
  }
  return { networks, invalid };
}

const MAX_FEED = 32 * 1024 * 1024;

/** GETs a feed (following up to 3 redirects); rejects on a non-2xx answer, a timeout or an oversized body. */
export function fetchText(url: string, timeoutMs: number, redirects = 3): Promise<string> {
  return new Promise((resolve, reject) => {
    const client = url.startsWith('https:') ? process.getBuiltinModule('node:https') : http;
    const req = client.get(url, { timeout: timeoutMs, headers: { 'user-agent': 'palisade-agent' } }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location && redirects > 0) {
        res.resume();
        fetchText(new URL(res.headers.location, url).toString(), timeoutMs, redirects - 1).then(resolve, reject);
        return;
      }
      if (status < 200 || status >= 300) {
        res.resume();
        reject(new Error(`the feed answered HTTP ${status}`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_FEED) {
          req.destroy(new Error(`the feed is larger than ${MAX_FEED} bytes`));
          return;
        }
        chunks.push(c);
      });
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}
