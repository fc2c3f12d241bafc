import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { tempDir } from '@palisade/testkit';
import {
  browserSkipReason,
  consoleWithBrowser,
  registerWithProduct,
  screenshot,
  signInThroughPage,
} from '../support/browser.js';

const skip = browserSkipReason();
const USER = { email: 'install-command@example.com', password: 'correct horse battery' };

/**
 * Agent packages for the console to serve: SHA256SUMS naming the executable is what it reads (the
 * files themselves are not fetched here). None at all: an empty directory.
 */
const packages = tempDir('palisade-web-packages-');
const withPackages = join(packages.path, 'with');
const withoutPackages = join(packages.path, 'without');
mkdirSync(withPackages);
mkdirSync(withoutPackages);
writeFileSync(join(withPackages, 'SHA256SUMS'), `${'0'.repeat(64)}  palisade-agent-0.1.0-linux-x64\n`);
after(() => packages.remove());

/** Add server offers "Install with one command": the line is shown once, with the token, and the token is listed. */
describe('the install command in the browser', { skip: skip ?? false }, () => {
  const suite = consoleWithBrowser('palisade-web-install-', { PALISADE_ARTIFACTS_DIR: withPackages }, async (url) => {
    await registerWithProduct(url, { ...USER, name: 'Install Command' });
  });

  test('create a command for a product, see it once with a copy button, then revoke its token', async () => {
    await suite.run(async (page) => {
      await signInThroughPage(page, USER);
      await page.goto('/dashboard/servers/add');
      await page.getByRole('heading', { name: 'Install with one command' }).waitFor();
      await page.getByText('No enrolment tokens yet.').waitFor();
      await page.getByLabel('Servers').fill('0');
      await page.getByRole('button', { name: 'Create install command' }).click();
      await page.getByText('A whole number from 1 to 10000.').waitFor();
      await page.getByLabel('Servers').fill('1');
      await page.getByRole('button', { name: 'Create install command' }).click();

      const command = page.getByTestId('install-command');
      await command.waitFor();
      const line = (await command.textContent()) ?? '';
      // Saved to a file, run only when downloaded; with sudo, and for a root shell without it.
      const download = `curl -fsSL ${suite.url.replace(/\./g, '\\.')}/install/agent\\.sh -o palisade-install\\.sh && `;
      assert.match(line, new RegExp(`^${download}sudo sh palisade-install\\.sh --token enr_[0-9A-Za-z]{38}$`));
      const rootLine = (await page.getByTestId('install-command-root').textContent()) ?? '';
      assert.equal(rootLine, line.replace('&& sudo sh ', '&& sh '));
      const section = page.getByRole('region', { name: 'Install command' });
      assert.equal(await section.getByRole('button', { name: 'Copy' }).count(), 2);
      const table = page.getByRole('table', { name: 'Enrolment tokens' });
      await table.getByText(`enr_…${line.slice(-4)}`).waitFor();
      await table.getByText('0 of 1').waitFor();
      await screenshot(page, 'add-server-install');
      // On a phone the line breaks only between words: the URL and the token each stay on one line.
      await page.setViewportSize({ width: 375, height: 800 });
      const split = await command.evaluate((el) => {
        const text = el.firstChild!;
        const words: string[] = [];
        for (const match of (text.textContent ?? '').matchAll(/\S+/g)) {
          const range = document.createRange();
          range.setStart(text, match.index);
          range.setEnd(text, match.index + match[0].length);
          if (range.getClientRects().length > 1) words.push(match[0]);
        }
        return words;
      });
      assert.deepEqual(split, [], 'no word of the command is broken across lines');
      await page.setViewportSize({ width: 1280, height: 800 });
      // The checkbox adds --protect auto to both lines (docs/agent.md, "One-line install").
      await section.getByLabel(/Enable protection for the services found/).check();
      assert.equal(await command.textContent(), `${line} --protect auto`);
      assert.equal(await page.getByTestId('install-command-root').textContent(), `${rootLine} --protect auto`);

      await section.getByRole('button', { name: 'Done' }).click();
      assert.equal(await page.getByTestId('install-command').count(), 0, 'the line is gone once dismissed');
      await table.getByRole('button', { name: 'Revoke' }).click();
      await table.getByRole('button', { name: `Revoke enr_…${line.slice(-4)}` }).click();
      await table.getByText('revoked').waitFor();
    });
  });
});

describe('the install command on a console without agent packages', { skip: skip ?? false }, () => {
  const suite = consoleWithBrowser(
    'palisade-web-install-',
    { PALISADE_ARTIFACTS_DIR: withoutPackages },
    async (url) => {
      await registerWithProduct(url, { ...USER, name: 'Install Command' });
    },
  );

  test('says what to do first and offers no line that would fail', async () => {
    await suite.run(async (page) => {
      await signInThroughPage(page, USER);
      await page.goto('/dashboard/servers/add');
      const note = page.getByTestId('no-packages');
      await note.waitFor();
      assert.match((await note.textContent()) ?? '', /no agent packages yet.*npm run package/s);
      assert.equal(await page.getByRole('button', { name: 'Create install command' }).count(), 0);
      // Adding a running agent by its address still works from the same page.
      await page.getByRole('heading', { name: 'Or add a running agent by its address and key' }).waitFor();
    });
  });
});
