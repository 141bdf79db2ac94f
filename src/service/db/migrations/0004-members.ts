export const name = '0004-members';

/**
 * Members of an account, and API keys of two kinds: USER keys act as their
 * member (with the member's role) and go with them; SERVICE keys belong to
 * the account. Keys made before members existed had no member: they become
 * service keys, which is what they were used as.
 */
export const sql = `
CREATE TABLE members (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  email text NOT NULL,
  name text NOT NULL,
  role text NOT NULL CHECK (role IN ('OWNER', 'ADMIN', 'READ_WRITE', 'READ_ONLY')),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX members_email ON members (account_id, lower(email));

ALTER TABLE api_keys ADD COLUMN member_id uuid REFERENCES members(id) ON DELETE CASCADE;
ALTER TABLE api_keys ADD COLUMN name text NOT NULL DEFAULT '';
UPDATE api_keys SET kind = 'SERVICE';
ALTER TABLE api_keys ALTER COLUMN kind SET DEFAULT 'SERVICE';
ALTER TABLE api_keys ADD CONSTRAINT api_keys_kind CHECK (
  (kind = 'USER' AND member_id IS NOT NULL) OR (kind = 'SERVICE' AND member_id IS NULL));
CREATE INDEX api_keys_account ON api_keys (account_id);
`;
