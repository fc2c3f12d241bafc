import { randomUUID } from 'node:crypto';
import nodemailer from 'nodemailer';

/** E-mail through the SMTP server the operator configured (`PALISADE_SMTP_URL`, docs/alerts.md). */
export interface Mailer {
  /** A text part, and an HTML part after it when `html` is given (readers that show text see the text). */
  send(message: { to: string; subject: string; text: string; html?: string }): Promise<void>;
}

export class MailerError extends Error {}

const TIMEOUT_MS = 10_000;

/**
 * A mailer for `smtpUrl`, sending as `from` (`PALISADE_SMTP_FROM`; without it `alerts@<SMTP host>`);
 * the Message-ID's domain is the sender's, so it matches the domain the relay signs for. Without
 * an SMTP URL every send fails with a message saying so (shown in the alert history).
 */
export function createMailer(
  smtpUrl: string | null,
  from: { name: string | null; address: string } | null = null,
): Mailer {
  if (!smtpUrl) {
    return {
      async send() {
        throw new MailerError('e-mail is not set up on this console (PALISADE_SMTP_URL is not set)');
      },
    };
  }
  const transport = nodemailer.createTransport({
    url: smtpUrl,
    connectionTimeout: TIMEOUT_MS,
    greetingTimeout: TIMEOUT_MS,
    socketTimeout: TIMEOUT_MS,
  });
  const sender = from ?? {
    name: 'Palisade',
    address: `alerts@${new URL(smtpUrl.replace(/^smtps?:/, 'http:')).hostname || 'localhost'}`,
  };
  const domain = sender.address.slice(sender.address.lastIndexOf('@') + 1);
  return {
    async send({ to, subject, text, html }) {
      try {
        await transport.sendMail({
          from: sender.name === null ? sender.address : { name: sender.name, address: sender.address },
          to,
          subject,
          text,
          ...(html === undefined ? {} : { html }),
          messageId: `<${randomUUID()}@${domain}>`,
        });
      } catch {
        // The SMTP server's own words (a refused recipient, a connection error) stay out of the
        // answer: they would tell an account which addresses exist (docs/security.md).
        throw new MailerError('the mail server did not accept the message');
      }
    },
  };
}
