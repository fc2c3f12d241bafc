import assert from 'node:assert/strict';
import { join } from 'node:path';
import { generateToken, hashToken } from '@palisade/protocol';
import SQLite from 'better-sqlite3';
import type { Page } from 'playwright-core';
import { type ConsoleWithBrowser, consoleWithBrowser, registerWithProduct } from './browser.js';

/** The people of the team browser tests: the owner signs up with the console, the joiner by an invitation. */
export const OWNER = { email: 'owner@example.com', password: 'correct horse battery', name: 'Olivia Owner' };
export const JOINER = { email: 'joiner@example.com', password: 'another long password', name: 'Jo Joiner' };

/** A console answer as the team tests read it: the status and the envelope. */
export interface Answer<T> {
  status: number;
  body: { data?: T; error?: string };
}

/** A call to the console as a person (`cookie`), acting in `team` when given (the X-Palisade-Team header). */
export type TeamCall = <T = Record<string, never>>(
  method: string,
  path: string,
  body?: unknown,
  cookie?: string,
  team?: number,
) => Promise<Answer<T>>;

/**
 * Calls to the console at `url()` (known once the suite's `before` ran), as `defaultCookie()`
 * unless a call names another cookie (`''`: signed out).
 */
export function teamCalls(url: () => string, defaultCookie: () => string): TeamCall {
  return async <T>(method: string, path: string, body?: unknown, cookie = defaultCookie(), team?: number) => {
    const res = await fetch(`${url()}${path}`, {
      method,
      headers: {
        ...(cookie ? { cookie } : {}),
        ...(team ? { 'x-palisade-team': String(team) } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Answer<T>['body'] };
  };
}

/**
 * A browser suite's console (consoleWithBrowser) where OWNER has signed up with a product, and
 * `api`, calls as OWNER unless a call names another cookie.
 */
export function consoleWithOwner(prefix: string): { suite: ConsoleWithBrowser; api: TeamCall } {
  let ownerCookie = '';
  const suite = consoleWithBrowser(prefix, {}, async (url) => {
    ownerCookie = await registerWithProduct(url, OWNER);
  });
  return {
    suite,
    api: teamCalls(
      () => suite.url,
      () => ownerCookie,
    ),
  };
}

/** An invitation made as the call's default person, in `team`: the path of its link (`/dashboard/invitations/<token>`). */
export async function inviteLink(call: TeamCall, role: string, email?: string, team?: number): Promise<string> {
  const made = await call<{ link: string }>(
    'POST',
    '/api/team/invitations',
    { role, ...(email ? { email } : {}) },
    undefined,
    team,
  );
  assert.equal(made.status, 201, made.body.error);
  return new URL(made.body.data!.link).pathname;
}

/**
 * A server of `team` written straight into the console's SQLite file in `dataDir` (as
 * e2e/support/fleet-seed.ts does), on a product of that team (the free one, taken if it has none).
 */
export async function addServerRow(call: TeamCall, dataDir: string, team: number, name: string): Promise<void> {
  type Products = { products: { id: number }[] };
  let products = (await call<Products>('GET', '/api/products', undefined, undefined, team)).body.data!.products;
  if (products.length === 0) {
    assert.equal((await call('POST', '/api/products', { catalog_id: 1 }, undefined, team)).status, 201);
    products = (await call<Products>('GET', '/api/products', undefined, undefined, team)).body.data!.products;
  }
  const db = new SQLite(join(dataDir, 'console.db'));
  try {
    db.prepare(
      `insert into servers (account_id, product_id, name, api_url, api_key_enc, facts, daemon_token_hash, tags, created_at)
       values (?, ?, ?, 'https://192.0.2.10:8443', 'unused', '{}', ?, '[]', ?)`,
    ).run(team, products[0]!.id, name, hashToken(generateToken('daemon')), Date.now());
  } finally {
    db.close();
  }
}

/** Fills the sign-in form the page shows (after a redirect, its address keeps where to go next). */
export async function signInHere(page: Page, user: { email: string; password: string }): Promise<void> {
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** The team a dashboard address names (`?team=<id>`). */
export const teamOf = (url: string) => Number(new URL(url).searchParams.get('team'));
