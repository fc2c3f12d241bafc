import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SECURITY_HEADERS } from '@palisade/console/web-headers';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

/** Debian's Chromium; `.ci/run` installs the `chromium` package. */
export const CHROMIUM = process.env.PALISADE_CHROMIUM ?? '/usr/bin/chromium';

export const WEB_DIST = fileURLToPath(new URL('../../../packages/web/dist/', import.meta.url));

export const SCREENSHOT_DIR = fileURLToPath(new URL('../../../docs/screenshots/', import.meta.url));

/**
 * Why the browser suite cannot run here, or undefined when it can. In CI a missing Chromium is an
 * error (the suite must not silently skip); locally it is a skip with this message.
 */
export function browserSkipReason(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  const reason = `Chromium not found at ${CHROMIUM} (apt-get install chromium); browser tests skipped`;
  if (process.env.CI) throw new Error(`CI: ${reason.replace('skipped', 'cannot be skipped in CI')}`);
  return reason;
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  /** Console errors and uncaught page errors seen so far. */
  errors: string[];
  /** Fails with every error collected (call at the end of each test). */
  assertNoErrors(): void;
  close(): Promise<void>;
}

/**
 * Chromium logs every non-2xx fetch as "Failed to load resource". An API answering 4xx (or the
 * proxy's 502 for an agent that is down) is an answer the dashboard shows as a state, not a page
 * error; anything else (script errors, React warnings, CSP violations, failed assets) fails the test.
 */
function isHandledApiAnswer(text: string, url: string | undefined): boolean {
  if (!/^Failed to load resource: the server responded with a status of (4\d\d|502)/.test(text)) return false;
  return url !== undefined && new URL(url).pathname.startsWith('/api/');
}

/** The console's own headers for dashboard files (packages/console/src/routes/web), CSP included. */
const DASHBOARD_HEADERS = SECURITY_HEADERS;
const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };

/** True when the console answers the dashboard itself (not its 503 "not built"). */
export async function consoleServesDashboard(baseURL: string): Promise<boolean> {
  const res = await fetch(new URL('/dashboard', baseURL));
  await res.arrayBuffer();
  return res.status === 200;
}

/**
 * Stopgap while the console cannot find packages/web/dist from its compiled location: the browser
 * gets the same built files with the console's headers (CSP included), and every /api call still
 * goes to the real console. Inert once the console serves the dashboard itself.
 */
async function serveBuiltDashboard(context: BrowserContext) {
  await context.route(
    (url) =>
      url.pathname === '/' ||
      url.pathname === '/dashboard' ||
      url.pathname.startsWith('/dashboard/') ||
      url.pathname.startsWith('/assets/'),
    async (route) => {
      const path = new URL(route.request().url()).pathname;
      // Redirected requests cannot be routed, so `/` gets the page itself, which moves on to /dashboard/….
      const file = path.startsWith('/assets/')
        ? join(WEB_DIST, normalize(path).replace(/^(\.\.[/\\])+/, ''))
        : join(WEB_DIST, 'index.html');
      if (!file.startsWith(WEB_DIST) || !existsSync(file)) return route.fulfill({ status: 404, body: 'not found' });
      return route.fulfill({
        status: 200,
        headers: { ...DASHBOARD_HEADERS, 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' },
        body: readFileSync(file),
      });
    },
  );
}

/** A fresh context (no cookies, no storage) and page, collecting console errors and page errors. */
export async function newSession(
  browser: Browser,
  baseURL: string,
  viewport: { width: number; height: number } = { width: 1280, height: 800 },
): Promise<BrowserSession> {
  const context = await browser.newContext({ baseURL, viewport, permissions: ['clipboard-read', 'clipboard-write'] });
  if (!(await consoleServesDashboard(baseURL))) await serveBuiltDashboard(context);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    if (isHandledApiAnswer(msg.text(), msg.location().url)) return;
    errors.push(`console: ${msg.text()} (${msg.location().url ?? 'unknown'})`);
  });
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  return {
    context,
    page,
    errors,
    assertNoErrors() {
      if (errors.length > 0) throw new Error(`the page logged errors:\n${errors.join('\n')}`);
    },
    close: () => context.close(),
  };
}

/** A PNG of the page at its current viewport, into docs/screenshots/. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: `${SCREENSHOT_DIR}${name}.png`, fullPage: false });
}

/** Nothing secret may be kept in web storage: returns what localStorage and sessionStorage hold. */
export async function webStorage(page: Page): Promise<string> {
  return page.evaluate(() => {
    const dump = (s: Storage) =>
      Array.from({ length: s.length }, (_, i) => `${s.key(i)}=${s.getItem(s.key(i) ?? '')}`).join('\n');
    return `${dump(window.localStorage)}\n${dump(window.sessionStorage)}`;
  });
}
