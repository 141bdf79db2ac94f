export const name = '0002-code-bundles';

/** Playwright check suites' code: stored once per upload, never changed, named by the checks that run it. */
export const sql = `
CREATE TABLE code_bundles (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  sha256 text NOT NULL,
  size bigint NOT NULL,
  path text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX code_bundles_account ON code_bundles (account_id);
`;
