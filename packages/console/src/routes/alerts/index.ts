import { alertChannelRequest, alertMuteRequest, alertRuleRequest, channelConfirmQuery } from '@palisade/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, badRequest, notFound } from '../../errors.js';
import { requireSession } from '../../plugins/auth.js';
import type { LimitName } from '../../plugins/rate-limits.js';
import { parseId, parseInput, parsePage } from '../../validation.js';
import { consoleUrl } from '../console-url.js';

function pathId(request: FastifyRequest<{ Params: { id: string } }>, what: string): number {
  const parsed = parseId(request.params.id);
  if (parsed === null) throw notFound(what);
  return parsed;
}

const LIMIT_WORDS: Partial<Record<LimitName, string>> = {
  channel_test: 'at most 5 tests or confirmation e-mails a minute for one channel',
  channel_test_account: 'at most 20 tests or confirmation e-mails an hour for one account',
};

/**
 * "Send a test" and confirmation e-mails make the console send to an address the account chose:
 * limited per channel and per account (docs/alerts.md, "Send a test"), 429 with Retry-After.
 */
async function limitSends(request: FastifyRequest, channelId: number | null) {
  const accountId = request.account!.id;
  const checks: Array<[LimitName, string]> = [['channel_test_account', String(accountId)]];
  if (channelId !== null) checks.unshift(['channel_test', `${accountId}:${channelId}`]);
  for (const [name, key] of checks) {
    const verdict = await request.server.limits.consume(name, key);
    if (!verdict.allowed)
      throw new AppError(
        429,
        `channel: too many sends (${LIMIT_WORDS[name]}); try again in ${verdict.resetS} s`,
        {},
        { 'retry-after': String(verdict.resetS) },
      );
  }
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The confirmation page: plain HTML, no script, the token never sent on as a Referer. */
function page(reply: FastifyReply, status: number, title: string, body: string) {
  return reply
    .code(status)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
      'content-security-policy':
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    })
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
        `<title>${escapeHtml(title)} · Palisade</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem}button{font:inherit;padding:.5rem 1rem}</style>` +
        `</head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`,
    );
}

/** Alerts (docs/alerts.md): rules, channels with "send a test", history, and maintenance mutes. Session only. */
export default async function alertRoutes(app: FastifyInstance) {
  const own = { preHandler: requireSession, config: { permission: 'alerts.write' } as const };
  type WithId = { Params: { id: string } };

  app.get('/api/alerts/rules', own, async (request) => ({
    data: { rules: await app.services.alerts.listRules(request.account!.id) },
  }));

  app.post('/api/alerts/rules', own, async (request, reply) => {
    const input = parseInput(alertRuleRequest, request.body, 'body');
    const rule = await app.services.alerts.createRule(request.account!.id, {
      ...input,
      metric: input.metric ?? null,
      threshold: input.threshold ?? null,
    });
    reply.code(201);
    return { data: { rule } };
  });

  app.put<WithId>('/api/alerts/rules/:id', own, async (request) => {
    const ruleId = pathId(request, 'rule');
    const input = parseInput(alertRuleRequest, request.body, 'body');
    const rule = await app.services.alerts.updateRule(request.account!.id, ruleId, {
      ...input,
      metric: input.metric ?? null,
      threshold: input.threshold ?? null,
    });
    return { data: { rule } };
  });

  app.delete<WithId>('/api/alerts/rules/:id', own, async (request) => {
    await app.services.alerts.removeRule(request.account!.id, pathId(request, 'rule'));
    return { data: { deleted: true } };
  });

  app.get('/api/alerts/channels', own, async (request) => ({
    data: { channels: await app.services.alerts.listChannels(request.account!.id) },
  }));

  app.post('/api/alerts/channels', own, async (request, reply) => {
    const input = parseInput(alertChannelRequest, request.body, 'body');
    // An e-mail channel sends its confirmation mail now: counted like a test.
    if (input.kind === 'email') await limitSends(request, null);
    const channel = await app.services.alerts.createChannel(
      request.account!.id,
      { ...input, url: input.url ?? null, email: input.email ?? null },
      consoleUrl(request),
    );
    reply.code(201);
    return { data: { channel } };
  });

  app.delete<WithId>('/api/alerts/channels/:id', own, async (request) => {
    await app.services.alerts.removeChannel(request.account!.id, pathId(request, 'channel'));
    return { data: { deleted: true } };
  });

  app.post<WithId>('/api/alerts/channels/:id/test', own, async (request) => {
    const channelId = pathId(request, 'channel');
    await app.services.alerts.requireChannelReady(request.account!.id, channelId);
    await limitSends(request, channelId);
    return { data: await app.services.alerts.testChannel(request.account!.id, channelId) };
  });

  app.post<WithId>('/api/alerts/channels/:id/confirmation', own, async (request) => {
    const channelId = pathId(request, 'channel');
    await app.services.alerts.requireChannelWaiting(request.account!.id, channelId);
    await limitSends(request, channelId);
    return {
      data: {
        channel: await app.services.alerts.resendConfirmation(request.account!.id, channelId, consoleUrl(request)),
      },
    };
  });

  // The recipient's side: the link in the confirmation mail opens a page with one button (a mail
  // scanner that fetches the link confirms nothing); pressing it uses the token up. No session.
  app.get<{ Querystring: { token?: string } }>('/alerts/confirm', async (request, reply) => {
    const parsed = channelConfirmQuery.safeParse({ token: request.query.token });
    const target = parsed.success ? await app.services.alerts.confirmationTarget(parsed.data.token) : null;
    if (!parsed.success || target === null)
      return page(
        reply,
        400,
        'Link not valid',
        '<p>token: this confirmation link is unknown, expired or already used. Ask the account owner to send a new one.</p>',
      );
    return page(
      reply,
      200,
      'Confirm alert e-mails',
      `<p>Send Palisade alert e-mails to <strong>${escapeHtml(target)}</strong>?</p>` +
        `<form method="post" action="/alerts/confirm"><input type="hidden" name="token" value="${parsed.data.token}">` +
        '<button type="submit">Confirm</button></form><p>If you did not expect this, close this page: nothing is sent.</p>',
    );
  });

  await app.register(async (form) => {
    // The page's form posts application/x-www-form-urlencoded; only this route reads it.
    form.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });
    form.post('/alerts/confirm', { config: { permission: 'public' } }, async (request, reply) => {
      const parsed = channelConfirmQuery.safeParse(request.body ?? {});
      if (!parsed.success)
        return page(reply, 400, 'Link not valid', '<p>token: expected the token from the confirmation e-mail.</p>');
      try {
        const target = await app.services.alerts.confirm(parsed.data.token);
        return page(
          reply,
          200,
          'Alert e-mails confirmed',
          `<p>Palisade alerts will now be sent to <strong>${escapeHtml(target)}</strong>. You can close this page.</p>`,
        );
      } catch (err) {
        if (err instanceof AppError && err.status === 400)
          return page(reply, 400, 'Link not valid', `<p>${escapeHtml(err.message)}</p>`);
        throw err;
      }
    });
  });

  app.get<{ Querystring: { limit?: string; cursor?: string } }>('/api/alerts/history', own, async (request) => {
    const raw = request.query.limit ?? '100';
    if (!/^[0-9]{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > 500) throw badRequest('limit: expected 1 to 500');
    // The cursor as every list that pages reads it (docs/api.md, "Lists that page"); the limit is this list's own.
    const { after } = parsePage({ cursor: request.query.cursor });
    return { data: await app.services.alerts.history(request.account!.id, { after, limit: Number(raw) }) };
  });

  // The last evaluation round, for the alert settings page (docs/alerts.md, "Timing").
  app.get('/api/alerts/evaluation', own, async () => {
    const status = await app.services.health.evaluation();
    return {
      data: { last_round_at: status.lastRoundAt, interval_s: status.intervalS, late: status.late, as_of: app.clock() },
    };
  });

  app.get('/api/alerts/mutes', own, async (request) => ({
    data: { mutes: await app.services.alerts.listMutes(request.account!.id) },
  }));

  app.put<WithId>('/api/alerts/mutes/:id', own, async (request) => {
    const { until } = parseInput(alertMuteRequest, request.body, 'body');
    return { data: await app.services.alerts.muteServer(request.account!.id, pathId(request, 'server'), until) };
  });

  app.delete<WithId>('/api/alerts/mutes/:id', own, async (request) => {
    await app.services.alerts.unmuteServer(request.account!.id, pathId(request, 'server'));
    return { data: { deleted: true } };
  });
}
