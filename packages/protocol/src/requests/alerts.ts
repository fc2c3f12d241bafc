import { z } from 'zod';
import { ALERT_METRICS, CHANNEL_KINDS, RULE_KINDS } from '../alerts.js';
import { serverTagsInput } from '../server-tags.js';
import { epochMsField, httpUrlField, idField, nameField } from './fields.js';

/** The largest threshold each metric accepts: percentages up to 100, load up to 1000; scores run 1–1000. */
export const THRESHOLD_MAX = { cpu: 100, memory: 100, disk: 100, load: 1000 } as const;

/** `POST /api/alerts/rules` and `PUT /api/alerts/rules/{id}` (docs/alerts.md, "Rules"). */
export const alertRuleRequest = z
  .strictObject({
    name: nameField,
    kind: z.enum(RULE_KINDS, `expected one of ${RULE_KINDS.join(', ')}`),
    metric: z
      .enum(ALERT_METRICS, `expected one of ${ALERT_METRICS.join(', ')}`)
      .nullable()
      .optional(),
    threshold: z.number('expected a number').refine(Number.isFinite, 'expected a finite number').nullable().optional(),
    minutes: z
      .number('expected an integer')
      .int('expected an integer')
      .min(0, 'expected 0 to 1440')
      .max(1440, 'expected 0 to 1440')
      .default(0),
    repeat_minutes: z
      .number('expected an integer')
      .int('expected an integer')
      .min(0, 'expected 0 (never) to 10080')
      .max(10_080, 'expected 0 (never) to 10080')
      .default(0),
    server_ids: z.array(idField).max(1000, 'at most 1000 servers').nullable().default(null),
    tags: serverTagsInput.nullable().default(null),
    channel_ids: z.array(idField).min(1, 'expected at least one channel').max(20, 'at most 20 channels'),
    enabled: z.boolean('expected true or false').default(true),
  })
  .superRefine((rule, ctx) => {
    if (rule.kind === 'metric') {
      if (!rule.metric) {
        ctx.addIssue({
          code: 'custom',
          path: ['metric'],
          message: `is required for a metric rule: one of ${ALERT_METRICS.join(', ')}`,
        });
        return;
      }
      const max = THRESHOLD_MAX[rule.metric];
      if (rule.threshold === null || rule.threshold === undefined) {
        ctx.addIssue({ code: 'custom', path: ['threshold'], message: `is required for a metric rule: 0 to ${max}` });
      } else if (rule.threshold < 0 || rule.threshold > max) {
        ctx.addIssue({ code: 'custom', path: ['threshold'], message: `expected 0 to ${max} for ${rule.metric}` });
      }
    } else if (rule.kind === 'score') {
      if (rule.threshold === null || rule.threshold === undefined) {
        ctx.addIssue({ code: 'custom', path: ['threshold'], message: 'is required for a score rule: 1 to 1000' });
      } else if (rule.threshold < 1 || rule.threshold > 1000) {
        ctx.addIssue({ code: 'custom', path: ['threshold'], message: 'expected 1 to 1000 for a score' });
      }
    }
  });
export type AlertRuleRequest = z.input<typeof alertRuleRequest>;
/** A rule as the console has checked it, defaults filled in. */
export type AlertRuleChecked = z.output<typeof alertRuleRequest>;

/** `POST /api/alerts/channels`: a URL for slack and discord, an address for email, nothing for webhook. */
export const alertChannelRequest = z
  .strictObject({
    name: nameField,
    kind: z.enum(CHANNEL_KINDS, `expected one of ${CHANNEL_KINDS.join(', ')}`),
    url: httpUrlField.nullable().optional(),
    email: z
      .string()
      .trim()
      .max(254, 'at most 254 characters')
      .email('expected an e-mail address')
      .nullable()
      .optional(),
  })
  .superRefine((channel, ctx) => {
    // A field of another kind is refused, not ignored: the sender meant something that would not happen.
    if (channel.url != null && channel.kind !== 'slack' && channel.kind !== 'discord')
      ctx.addIssue({
        code: 'custom',
        path: ['url'],
        message: `is for slack and discord channels; a ${channel.kind} channel ${channel.kind === 'email' ? 'sends to `email`' : 'sends to the account webhook'}: leave url out`,
      });
    if (channel.email != null && channel.kind !== 'email')
      ctx.addIssue({
        code: 'custom',
        path: ['email'],
        message: `is for email channels; a ${channel.kind} channel has no address: leave email out`,
      });
  });
export type AlertChannelRequest = z.input<typeof alertChannelRequest>;

/** `PUT /api/alerts/mutes/{id}`: the server's alerts are muted until then. */
export const alertMuteRequest = z.strictObject({
  until: epochMsField.positive('expected epoch milliseconds'),
});
export type AlertMuteRequest = z.input<typeof alertMuteRequest>;

/** `GET|POST /alerts/confirm?token=…`: the token of a channel's confirmation e-mail. */
export const channelConfirmQuery = z.strictObject({
  token: z
    .string('expected the token from the confirmation e-mail')
    .regex(/^[A-Za-z0-9_-]{43}$/, 'expected the token from the confirmation e-mail'),
});
