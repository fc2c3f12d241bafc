import { type Browser, type BrowserServer, chromium } from 'playwright-core';

/** Debian's Chromium; `.ci/run` installs the `chromium` package. */
export const CHROMIUM = process.env.PALISADE_CHROMIUM ?? '/usr/bin/chromium';

/** Set by scripts/test.mjs: the one Chromium of a test run, which every browser test file connects to. */
export const SHARED_BROWSER_ENV = 'PALISADE_TEST_BROWSER_WS';

const options = {
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
};

/**
 * The run's Chromium when scripts/test.mjs started one (each file then opens its own contexts in it
 * instead of starting a browser), else a Chromium of this file's own. close() on a connected
 * browser closes this file's contexts and connection, never the shared browser.
 */
export function launchBrowser(): Promise<Browser> {
  const shared = process.env[SHARED_BROWSER_ENV];
  return shared ? chromium.connect(shared) : chromium.launch(options);
}

/** One Chromium for a whole test run, for launchBrowser() in every file to connect to. */
export function launchSharedBrowser(): Promise<BrowserServer> {
  return chromium.launchServer(options);
}
