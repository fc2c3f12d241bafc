import nodemailer from 'nodemailer';

/** E-mail through the SMTP server the operator configured (`PALISADE_SMTP_URL`, docs/alerts.md). */
export interface Mailer {
  send(message: { to: string; subject: string; text: string }): Promise<void>;
}

export class MailerError extends Error {}

const TIMEOUT_MS = 10_000;

/** A mailer for `smtpUrl`; without one every send fails with a message saying so (shown in the alert history). */
export function createMailer(smtpUrl: string | null): Mailer {
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
  const from = `Palisade <alerts@${new URL(smtpUrl.replace(/^smtps?:/, 'http:')).hostname || 'localhost'}>`;
  return {
    async send({ to, subject, text }) {
      try {
        await transport.sendMail({ from, to, subject, text });
      } catch {
        // The SMTP server's own words (a refused recipient, a connection error) stay out of the
        // answer: they would tell an account which addresses exist (docs/security.md).
        throw new MailerError('the mail server did not accept the message');
      }
    },
  };
}
