export const name = '0017-test-sessions';

/**
 * Test sessions: what `checkly test` and `checkly trigger` start. `test` runs
 * check definitions the CLI sends, which are never stored as checks: their
 * check sessions name no check (check_id NULL) and their jobs and results
 * carry the sequence id the CLI follows the run by. `trigger` runs stored
 * checks, whose sessions keep their check. Each check of a test session is a
 * row of test_session_checks, with the ids the CLI's MQTT topics are made of.
 * A session started without recording is kept only while it runs and is
 * never listed.
 */
export const sql = `
CREATE TABLE test_sessions (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name text NOT NULL,
  provider text NOT NULL CHECK (provider IN ('API', 'TRIGGER')),
  check_run_suite_id uuid NOT NULL,
  private_location_id uuid REFERENCES private_locations(id) ON DELETE SET NULL,
  run_location text NOT NULL,
  recorded boolean NOT NULL,
  project_logical_id text,
  repo_info jsonb,
  environment text,
  started_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (account_id, check_run_suite_id)
);
CREATE INDEX test_sessions_account ON test_sessions (account_id, started_at DESC, id DESC) WHERE recorded;

CREATE TABLE test_session_checks (
  sequence_id uuid PRIMARY KEY,
  test_session_id uuid NOT NULL REFERENCES test_sessions(id) ON DELETE CASCADE,
  check_session_id uuid NOT NULL REFERENCES check_sessions(id) ON DELETE CASCADE,
  check_run_id uuid NOT NULL,
  check_id uuid,
  logical_id text,
  file_path text,
  position integer NOT NULL
);
CREATE INDEX test_session_checks_session ON test_session_checks (test_session_id, position);
CREATE INDEX test_session_checks_check_session ON test_session_checks (check_session_id);

ALTER TABLE check_sessions ALTER COLUMN check_id DROP NOT NULL;
`;
