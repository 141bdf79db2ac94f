import nodemailer from 'nodemailer';
import type { Logger } from '../../logging.js';
import type { MailConfig } from '../config.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Sends one e-mail or throws; the outbox decides about retries. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/** SMTP through nodemailer, one pooled transport for the service's life. */
function smtpMailer(url: string, from: string): Mailer {
  const transport = nodemailer.createTransport(url, { from });
  return {
    async send(message) {
      await transport.sendMail({ from, to: message.to, subject: message.subject, text: message.text });
    },
    close() {
      transport.close();
    },
  };
}

/**
 * Without a mail server the e-mail is written to the log, so a self-hosted
 * service without SMTP still shows the verification links it would send.
 */
function logMailer(logger: Logger): Mailer {
  return {
    async send(message) {
      logger.info({ to: message.to, subject: message.subject, text: message.text }, 'e-mail (no SMTP_URL set: logged, not sent)');
    },
    close() {},
  };
}

export function createMailer(config: MailConfig, logger: Logger): Mailer {
  return config.smtpUrl ? smtpMailer(config.smtpUrl.reveal(), config.from) : logMailer(logger);
}
