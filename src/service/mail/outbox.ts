import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import type { Logger } from '../../logging.js';
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
  await tx.query(
    `INSERT INTO email_outbox (id, account_id, kind, recipient, subject, body)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[])`,
    [
      mails.map(() => randomUUID()),
      mails.map((mail) => mail.accountId),
      mails.map((mail) => mail.kind),
      mails.map((mail) => mail.to),
      mails.map((mail) => mail.subject),
      mails.map((mail) => mail.text),
    ],
  );
}

interface OutboxRow {
  id: string;
  recipient: string;
  subject: string;
  body: string;
  attempts: number;
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
  const due = await db.query<OutboxRow>(
    `UPDATE email_outbox SET attempts = attempts + 1, next_attempt_at = now() + make_interval(secs => $2)
     WHERE id IN (SELECT id FROM email_outbox WHERE state = 'pending' AND next_attempt_at <= now()
                  ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING id, recipient, subject, body, attempts`,
    [batch, CLAIM_SECONDS],
  );
  for (const mail of due) {
    try {
      await mailer.send({ to: mail.recipient, subject: mail.subject, text: mail.body });
      await db.query("UPDATE email_outbox SET state = 'sent', sent_at = now(), last_error = NULL WHERE id = $1", [mail.id]);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const last = mail.attempts >= MAX_ATTEMPTS;
      await db.query(
        `UPDATE email_outbox SET last_error = $2, state = CASE WHEN $3 THEN 'failed' ELSE 'pending' END,
           next_attempt_at = now() + make_interval(secs => $4)
         WHERE id = $1`,
        [mail.id, message, last, (retryBaseMs * 2 ** (mail.attempts - 1)) / 1000],
      );
      logger.warn({ mailId: mail.id, attempt: mail.attempts, err: message }, last ? 'e-mail given up' : 'e-mail failed; will retry');
    }
  }
  return due.length;
}
