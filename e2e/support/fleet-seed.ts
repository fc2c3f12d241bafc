import { join } from 'node:path';
import { generateToken, hashToken } from '@palisade/protocol';
import SQLite from 'better-sqlite3';

/**
 * Servers written straight into a console's SQLite database, as an operator's import would (past
 * any product limit), for browser tests of large fleets; everything the browser then sees goes
 * through the console's API. Each gets a daemon token for the check-in protocol; answered in order
 * with its id.
 */
export async function insertServers(
  url: string,
  dataDir: string,
  cookie: string,
  servers: { name: string; tags: string[]; apiUrl: string }[],
): Promise<{ id: number; daemon: string }[]> {
  const me = (await (await fetch(`${url}/api/account/me`, { headers: { cookie } })).json()) as { data: { id: number } };
  const products = (await (await fetch(`${url}/api/products`, { headers: { cookie } })).json()) as {
    data: { products: { id: number }[] };
  };
  const db = new SQLite(join(dataDir, 'console.db'));
  try {
    const insert = db.prepare(
      `insert into servers (account_id, product_id, name, api_url, api_key_enc, facts, daemon_token_hash, tags, created_at)
       values (?, ?, ?, ?, 'unused', '{}', ?, ?, ?)`,
    );
    return db.transaction(() =>
      servers.map((s) => {
        const daemon = generateToken('daemon');
        const productId = products.data.products[0]!.id;
        const row = insert.run(
          me.data.id,
          productId,
          s.name,
          s.apiUrl,
          hashToken(daemon),
          JSON.stringify(s.tags),
          Date.now(),
        );
        return { id: Number(row.lastInsertRowid), daemon };
      }),
    )();
  } finally {
    db.close();
  }
}
