export const name = '0009-root-cause-analyses';

/**
 * Root cause analyses of error groups: the group and the failed results are
 * kept as they were when the analysis was asked for, so it explains what the
 * user saw even after results age out; `claimed_until` lets one generator
 * at a time work on it and another take over if that one dies.
 */
export const sql = `
CREATE TABLE root_cause_analyses (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  subject text NOT NULL CHECK (subject IN ('CHECK_ERROR_GROUP', 'TEST_SESSION_ERROR_GROUP')),
  check_id uuid,
  check_session_id uuid,
  error_group jsonb NOT NULL,
  input jsonb NOT NULL,
  status text NOT NULL CHECK (status IN ('PENDING', 'COMPLETED')),
  provider text,
  model text,
  analysis jsonb,
  attempts integer NOT NULL DEFAULT 0,
  claimed_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz
);
CREATE INDEX root_cause_analyses_pending ON root_cause_analyses (created_at) WHERE status = 'PENDING';
`;
