export const name = '0008-subscriptions-and-mail';

/**
 * Status page subscribers (PENDING until they follow the link mailed to
 * them, then VERIFIED), and the outbox every e-mail goes through: written in
 * the transaction that causes it, sent and retried by the scheduler's tick,
 * and kept as the record of what was delivered.
 */
export const sql = `
CREATE TABLE status_page_subscriptions (
  id uuid PRIMARY KEY,
  status_page_id uuid NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
  type text NOT NULL DEFAULT 'EMAIL' CHECK (type = 'EMAIL'),
  address text NOT NULL,
  status text NOT NULL CHECK (status IN ('PENDING', 'VERIFIED')),
  verify_token_hash text NOT NULL UNIQUE,
  unsubscribe_token text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX status_page_subscriptions_address ON status_page_subscriptions (status_page_id, lower(address));

CREATE TABLE email_outbox (
  id uuid PRIMARY KEY,
  account_id uuid REFERENCES accounts(id) ON DELETE CASCADE,
  kind text NOT NULL,
  recipient text NOT NULL,
  subject text NOT NULL,
  body text NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz
);
CREATE INDEX email_outbox_due ON email_outbox (next_attempt_at) WHERE state = 'pending';
`;
