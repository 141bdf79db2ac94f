export const name = '0003-environment-variables';

/** Account-wide variables, handed to every script check's run; a check's own variable of the same key wins. */
export const sql = `
CREATE TABLE environment_variables (
  account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  key text NOT NULL,
  value text NOT NULL,
  locked boolean NOT NULL DEFAULT false,
  secret boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz,
  PRIMARY KEY (account_id, key)
);
`;
