import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import type { Logger } from '../../logging.js';
import { claimDueMail, insertOutboxMails, markMailFailed, markMailSent } from '../store/email-outbox.js';
import type { Mailer } from './mailer.js';

export interface OutgoingMail {
  accountId: string;
  /** What it is, for the record: `subscription-verify`, `incident-update`… */
  kind: string;
  to: string;
  subject: string;
  text: string;
}

/** Tries per e-mail; the delays double from the base between them. */
export const MAX_ATTEMPTS = 6;
/** How long a claimed e-mail is someone's before another delivery round may take it. */
const CLAIM_SECONDS = 300;

/** Written in the caller's transaction: the e-mail exists exactly when what caused it does. */
export async function enqueueMail(tx: Queryable, mails: readonly OutgoingMail[]): Promise<void> {
  if (mails.length === 0) return;
  await insertOutboxMails(
    tx,
    mails.map((mail) => ({
      id: randomUUID(),
      accountId: mail.accountId,
      kind: mail.kind,
      recipient: mail.to,
      subject: mail.subject,
      body: mail.text,
    })),
  );
}

/**
 * Sends what is due, a batch at a time. Rows are claimed by moving their
 * next attempt ahead in one statement, so nothing is sent inside a
 * transaction and two rounds never send the same e-mail; a process that dies
 * mid-send leaves its claim to run out. A failure is retried after
 * `retryBaseMs` × 2^(attempts − 1), and given up after MAX_ATTEMPTS.
 */
export async function deliverDueMail(
  db: Queryable,
  mailer: Mailer,
  logger: Logger,
  retryBaseMs: number,
  batch = 20,
): Promise<number> {
  const due = await claimDueMail(db, batch, CLAIM_SECONDS);
  for (const mail of due) {
    try {
      await mailer.send({ to: mail.recipient, subject: mail.subject, text: mail.body });
      await markMailSent(db, mail.id);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const last = mail.attempts >= MAX_ATTEMPTS;
      await markMailFailed(db, mail.id, message, last, (retryBaseMs * 2 ** (mail.attempts - 1)) / 1000);
      logger.warn({ mailId: mail.id, attempt: mail.attempts, err: message }, last ? 'e-mail given up' : 'e-mail failed; will retry');
    }
  }
  return due.length;
}
