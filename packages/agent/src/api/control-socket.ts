import { rmSync } from 'node:fs';
import http from 'node:http';

/**
 * The local control channel of the CLI: HTTP over a Unix socket in the state dir (mode 0600).
 * Whoever can open it can already read the state dir, so it needs no key.
 */
export interface ControlRoutes {
  status: () => unknown;
  alertTest: (count: number) => unknown;
  reloadEnrolment: () => unknown;
}

export async function listenControlSocket(path: string, routes: ControlRoutes): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://local');
    let status = 200;
    let body: unknown;
    try {
      const route = `${req.method} ${url.pathname}`;
      if (route === 'GET /status') body = routes.status();
      else if (route === 'POST /alert-test') {
        const count = Math.min(10_000, Math.max(1, Number.parseInt(url.searchParams.get('count') ?? '1', 10) || 1));
        body = routes.alertTest(count);
      } else if (route === 'POST /enrolment') body = routes.reloadEnrolment();
      else {
        status = 404;
        body = { error: `no route ${route}` };
      }
    } catch (err) {
      status = 500;
      body = { error: (err as Error).message };
    }
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
    req.resume();
  });
  rmSync(path, { force: true });
  // The socket is made 0600 by the umask while it is created: a chmod afterwards would follow a
  // link planted in its place (docs/security.md, "The agent's Unix user and the firewall").
  const umask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } finally {
    process.umask(umask);
  }
  return server;
}

/** Calls the daemon's control socket; rejects when no daemon listens there. */
export function controlRequest<T>(path: string, method: 'GET' | 'POST', route: string, timeoutMs = 5000): Promise<T> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath: path, method, path: route, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as T & { error?: string };
          if ((res.statusCode ?? 500) >= 400) reject(new Error(body.error ?? `HTTP ${res.statusCode}`));
          else resolve(body);
        } catch (err) {
          reject(err);
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error('the daemon did not answer on its control socket')));
    req.on('error', reject);
    req.end();
  });
}
