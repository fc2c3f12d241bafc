import type { RequestBodyName } from '../requests/index.js';
import { type DashboardRoute, paging } from './route.js';

/** Alert rules, channels, history, mutes and evaluation (docs/alerts.md). */
export const alertRoutes: DashboardRoute[] = [
  ...(
    [
      ['get', '/api/alerts/rules', 'Alert rules of the account', 200, 'alertRules', [401]],
      ['post', '/api/alerts/rules', 'Add an alert rule', 201, 'alertRule', [400, 401]],
      ['put', '/api/alerts/rules/{id}', 'Change an alert rule', 200, 'alertRule', [400, 401, 404]],
      ['delete', '/api/alerts/rules/{id}', 'Remove an alert rule', 200, 'deleted', [401, 404]],
      [
        'get',
        '/api/alerts/channels',
        'Alert channels (targets shortened, never a secret)',
        200,
        'alertChannels',
        [401],
      ],
      [
        'post',
        '/api/alerts/channels',
        'Add an alert channel (an e-mail channel is sent a confirmation e-mail and waits for it)',
        201,
        'alertChannel',
        [400, 401, 429],
      ],
      ['delete', '/api/alerts/channels/{id}', 'Remove an alert channel', 200, 'deleted', [401, 404]],
      [
        'post',
        '/api/alerts/channels/{id}/test',
        'Send a test through a channel now (limited per channel and per account)',
        200,
        'alertChannelTest',
        [401, 404, 409, 429],
      ],
      [
        'post',
        '/api/alerts/channels/{id}/confirmation',
        'Send the confirmation e-mail of an e-mail channel again (the earlier link stops working)',
        200,
        'alertChannel',
        [401, 404, 409, 429],
      ],
      [
        'get',
        '/api/alerts/history',
        'What fired, when, through which channel, delivered or not',
        200,
        'alertHistory',
        [400, 401],
      ],
      ['get', '/api/alerts/mutes', 'Servers whose alerts are muted, and until when', 200, 'alertMutes', [401]],
      [
        'put',
        '/api/alerts/mutes/{id}',
        "Mute a server's alerts until a time (maintenance)",
        200,
        'alertMute',
        [400, 401, 404],
      ],
      ['delete', '/api/alerts/mutes/{id}', "Unmute a server's alerts", 200, 'deleted', [401, 404]],
      [
        'get',
        '/api/alerts/evaluation',
        'When alert rules were last evaluated (by any console), and whether that is late',
        200,
        'alertEvaluation',
        [401],
      ],
    ] as const
  ).map(
    ([method, path, summary, status, answer, errors]): DashboardRoute => ({
      method,
      path,
      summary,
      auth: 'session',
      status,
      answer,
      errors: [...errors],
      ...(path === '/api/alerts/history'
        ? {
            query: {
              cursor: paging.cursor!,
              limit: { description: 'at most this many, 1 to 500; default 100', schema: { type: 'string' } },
            },
          }
        : {}),
    }),
  ),
];

/** The body each write of this area takes, by `<method> <path>` (schemas in packages/protocol/src/requests). */
export const alertRequestBodies: Record<string, RequestBodyName> = {
  'post /api/alerts/rules': 'AlertRule',
  'put /api/alerts/rules/{id}': 'AlertRule',
  'post /api/alerts/channels': 'AlertChannel',
  'put /api/alerts/mutes/{id}': 'AlertMute',
};
