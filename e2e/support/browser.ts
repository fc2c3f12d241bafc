import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import type AxeCore from 'axe-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CHROMIUM, launchBrowser } from './chromium.js';
import { type ConsoleProcess, signUp, startConsoleProcess, tempDir } from './processes.js';

export { CHROMIUM, launchBrowser };

/**
 * The tracked docs/screenshots/ only when asked (`UPDATE_SCREENSHOTS=1`); otherwise a temp dir, so a
 * test run leaves the working tree as it found it while every screenshot is still taken.
 */
export const SCREENSHOT_DIR =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? fileURLToPath(new URL('../../../docs/screenshots/', import.meta.url))
    : join(tmpdir(), 'palisade-screenshots/');

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

/** A fresh context (no cookies, no storage) and page, collecting console errors and page errors. */
export async function newSession(
  browser: Browser,
  baseURL: string,
  viewport: { width: number; height: number } = { width: 1280, height: 800 },
): Promise<BrowserSession> {
  const context = await browser.newContext({ baseURL, viewport, permissions: ['clipboard-read', 'clipboard-write'] });
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

/**
 * Runs `body` in a fresh session (newSession) and fails it on any console or page error; when it
 * fails, a screenshot of the page goes to the temp dir and the error names it and the page's address.
 */
export async function inSession(
  browser: Browser,
  baseURL: string,
  viewport: { width: number; height: number } | undefined,
  body: (page: Page, session: BrowserSession) => Promise<void>,
): Promise<void> {
  const session = await newSession(browser, baseURL, viewport);
  try {
    await body(session.page, session);
    session.assertNoErrors();
  } catch (err) {
    const shot = join(tmpdir(), `palisade-e2e-failure-${Date.now()}.png`);
    await session.page.screenshot({ path: shot }).catch(() => {});
    throw new Error(`${(err as Error).message}\nat ${session.page.url()}; screenshot: ${shot}`, { cause: err });
  } finally {
    await session.close();
  }
}

/** A PNG of the page at its current viewport, into SCREENSHOT_DIR. */
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

export interface Account {
  email: string;
  password: string;
}

/**
 * An account registered through the console's API with one product taken from the catalog (the
 * free one unless `catalogId` says), so a browser test can go straight to adding servers. Returns
 * the session cookie.
 */
export async function registerWithProduct(
  consoleUrl: string,
  user: Account & { name: string },
  /** Catalog item: 1 the free Starter plan, 2 Pro (benchmarks are only in Pro and Fleet). */
  catalogId = 1,
): Promise<string> {
  const cookie = await signUp(consoleUrl, user);
  const product = await fetch(`${consoleUrl}/api/products`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ catalog_id: catalogId }),
  });
  if (product.status !== 201) throw new Error(`take catalog product ${catalogId}: HTTP ${product.status}`);
  return cookie;
}

/** Signs in through the sign-in page and waits for the fleet page. */
export async function signInThroughPage(page: Page, user: Account): Promise<void> {
  await page.goto('/dashboard/sign-in');
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Fleet' }).waitFor();
}

/** What `consoleWithBrowser` gives a suite once its `before` hook has run. */
export interface ConsoleWithBrowser {
  /** The console's data dir (its SQLite file is `console.db` there). */
  dataDir: string;
  console: ConsoleProcess;
  browser: Browser;
  url: string;
  /** inSession on this console: a fresh session, failing on page errors, with a screenshot on failure. */
  run(
    body: (page: Page, session: BrowserSession) => Promise<void>,
    viewport?: { width: number; height: number },
  ): Promise<void>;
}

/**
 * A browser suite's console and Chromium: registers `before` (start a console on a fresh data dir
 * with `env`, then `setup` against it, then launch Chromium) and `after` (close and remove them).
 */
export function consoleWithBrowser(
  prefix: string,
  env: Record<string, string> = {},
  setup?: (url: string, dataDir: string) => Promise<void>,
): ConsoleWithBrowser {
  const data = tempDir(prefix);
  const suite = { dataDir: data.path } as ConsoleWithBrowser;
  before(async () => {
    suite.console = await startConsoleProcess({ PALISADE_DATA_DIR: data.path, PALISADE_BOOTSTRAP_ADMIN: '0', ...env });
    suite.url = suite.console.url;
    await setup?.(suite.url, data.path);
    suite.browser = await launchBrowser();
  });
  after(async () => {
    await suite.browser?.close();
    await suite.console?.kill();
    data.remove();
  });
  suite.run = (body, viewport) => inSession(suite.browser, suite.url, viewport, body);
  return suite;
}

declare global {
  interface Window {
    axe?: typeof AxeCore;
  }
}

/** axe-core's browser build, read once; the root package's devDependency. */
let axeSource: string | undefined;

/**
 * Fails when axe-core finds any WCAG 2 A or AA violation on the page as it is now (contrast in the theme
 * shown, names, labels, landmarks…), listing each rule with the elements that break it and why.
 * The script goes in through the DevTools protocol, so the dashboard's CSP needs no exception for it.
 */
export async function assertAccessible(page: Page, what: string): Promise<void> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate(() => window.axe !== undefined))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const results = await window.axe!.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa'] },
      resultTypes: ['violations'],
    });
    return results.violations.map((v) => ({
      rule: `${v.id} (${v.impact ?? 'unknown'}): ${v.help}`,
      nodes: v.nodes.map((n) => `${n.target.join(' ')}: ${(n.failureSummary ?? '').replace(/\s+/g, ' ').trim()}`),
    }));
  });
  if (violations.length === 0) return;
  const list = violations.map((v) => `- ${v.rule}\n${v.nodes.map((n) => `    ${n}`).join('\n')}`).join('\n');
  throw new Error(`${what}: ${violations.length} WCAG 2 A/AA rule(s) broken (axe-core):\n${list}`);
}
