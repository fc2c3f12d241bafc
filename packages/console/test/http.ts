import { request as httpRequest } from 'node:http';

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request over a real socket, with the path sent exactly as given (no client-side normalisation). */
export function rawRequest(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const length = body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) };
    const options = { host: '127.0.0.1', port, method, path, headers: { ...length, ...headers }, agent: false };
    const req = httpRequest(options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** An answer read by a test: status, headers and the JSON body (checked field by field by the caller). */
export interface JsonAnswer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: the answers are checked field by field by each test
  json: { data: any; error?: string };
}

/**
 * Registers an account on a running console and answers a caller that sends its session cookie,
 * with the account's id: the dashboard routes as a signed-in user calls them.
 */
export async function registeredCaller(baseUrl: string, account: { email: string; password: string; name: string }) {
  let cookie = '';
  const call = async (method: string, path: string, body?: unknown): Promise<JsonAnswer> => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), cookie },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, headers: res.headers, json: (await res.json()) as JsonAnswer['json'] };
  };
  const registered = await call('POST', '/api/auth/register', account);
  if (registered.status !== 201) throw new Error(`register answered ${registered.status}: ${registered.json.error}`);
  cookie = registered.headers.get('set-cookie')!.split(';')[0]!;
  return { call, accountId: registered.json.data.account.id as number };
}
