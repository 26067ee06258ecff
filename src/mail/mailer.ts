import { createTransport } from 'nodemailer';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Outgoing e-mail: SMTP through nodemailer when SMTP_URL is set; otherwise only logged. */
export interface Mailer {
  readonly configured: boolean;
  send(message: MailMessage): Promise<void>;
}

export interface MailLogger {
  info(details: object, message: string): void;
}

export function createMailer(options: {
  smtpUrl: string | undefined;
  from: string;
  logger: MailLogger;
}): Mailer {
  if (!options.smtpUrl) {
    return {
      configured: false,
      async send(message) {
        options.logger.info(
          { to: message.to, subject: message.subject },
          'mail not configured (SMTP_URL); not sent',
        );
      },
    };
  }
  const transport = createTransport(options.smtpUrl);
  return {
    configured: true,
    async send(message) {
      await transport.sendMail({ from: options.from, ...message });
    },
  };
}
