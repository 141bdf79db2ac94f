/**
 * The e-mail outbox: mail written with what caused it, sent later by
 * delivery rounds that claim rows so no two rounds send the same one.
 */
import type { Queryable } from '../db/database.js';

export interface NewOutboxMail {
  id: string;
  accountId: string;
  kind: string;
  recipient: string;
  subject: string;
  body: string;
}

export async function insertOutboxMails(tx: Queryable, mails: readonly NewOutboxMail[]): Promise<void> {
  await tx.query(
    `INSERT INTO email_outbox (id, account_id, kind, recipient, subject, body)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[])`,
    [
      mails.map((mail) => mail.id),
      mails.map((mail) => mail.accountId),
      mails.map((mail) => mail.kind),
      mails.map((mail) => mail.recipient),
      mails.map((mail) => mail.subject),
      mails.map((mail) => mail.body),
    ],
  );
}

export interface OutboxRow {
  id: string;
  recipient: string;
  subject: string;
  body: string;
  /** Counting the attempt this claim is for. */
  attempts: number;
}

/**
 * Claims up to `batch` pending e-mails that are due, oldest due first, in one
 * statement: each one's attempt is counted and its next attempt moved
 * `claimSeconds` ahead, so another round takes it only once the claim ran out.
 */
export async function claimDueMail(db: Queryable, batch: number, claimSeconds: number): Promise<OutboxRow[]> {
  return db.query<OutboxRow>(
    `UPDATE email_outbox SET attempts = attempts + 1, next_attempt_at = now() + make_interval(secs => $2)
     WHERE id IN (SELECT id FROM email_outbox WHERE state = 'pending' AND next_attempt_at <= now()
                  ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING id, recipient, subject, body, attempts`,
    [batch, claimSeconds],
  );
}

export async function markMailSent(db: Queryable, id: string): Promise<void> {
  await db.query("UPDATE email_outbox SET state = 'sent', sent_at = now(), last_error = NULL WHERE id = $1", [id]);
}

/** Records a failed attempt: tried again in `retryInSeconds`, or never again when `giveUp`. */
export async function markMailFailed(
  db: Queryable,
  id: string,
  error: string,
  giveUp: boolean,
  retryInSeconds: number,
): Promise<void> {
  await db.query(
    `UPDATE email_outbox SET last_error = $2, state = CASE WHEN $3 THEN 'failed' ELSE 'pending' END,
       next_attempt_at = now() + make_interval(secs => $4)
     WHERE id = $1`,
    [id, error, giveUp, retryInSeconds],
  );
}
