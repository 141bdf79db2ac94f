export const name = '0001-initial';

export const sql = `
CREATE TABLE accounts (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  key_hash text NOT NULL UNIQUE,
  masked_key text NOT NULL,
  kind text NOT NULL DEFAULT 'USER',
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE private_locations (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name text NOT NULL,
  slug_name text NOT NULL,
  icon text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz,
  last_seen timestamptz,
  UNIQUE (account_id, slug_name)
);

CREATE TABLE private_location_keys (
  id uuid PRIMARY KEY,
  private_location_id uuid NOT NULL REFERENCES private_locations(id) ON DELETE CASCADE,
  key_hash text NOT NULL UNIQUE,
  masked_key text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz
);

CREATE TABLE agents (
  id uuid PRIMARY KEY,
  private_location_id uuid NOT NULL REFERENCES private_locations(id) ON DELETE CASCADE,
  hostname text NOT NULL,
  version text NOT NULL,
  mode text NOT NULL,
  check_types jsonb NOT NULL,
  runtimes jsonb NOT NULL,
  capacity jsonb NOT NULL,
  first_seen timestamptz NOT NULL DEFAULT now(),
  last_seen timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE checks (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  check_type text NOT NULL,
  name text NOT NULL,
  activated boolean NOT NULL,
  muted boolean NOT NULL,
  frequency integer NOT NULL,
  tags jsonb NOT NULL DEFAULT '[]',
  private_locations jsonb NOT NULL DEFAULT '[]',
  definition jsonb NOT NULL,
  next_run_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz
);
CREATE INDEX checks_account ON checks (account_id, created_at);
CREATE INDEX checks_due ON checks (next_run_at) WHERE activated;

CREATE TABLE check_sessions (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  check_id uuid NOT NULL REFERENCES checks(id) ON DELETE CASCADE,
  check_type text NOT NULL,
  name text NOT NULL,
  status text NOT NULL,
  run_source text NOT NULL,
  run_locations jsonb NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  stopped_at timestamptz
);
CREATE INDEX check_sessions_check ON check_sessions (check_id, started_at);

CREATE TABLE jobs (
  id uuid PRIMARY KEY,
  session_id uuid NOT NULL REFERENCES check_sessions(id) ON DELETE CASCADE,
  account_id uuid NOT NULL,
  check_id uuid NOT NULL,
  private_location_id uuid NOT NULL REFERENCES private_locations(id) ON DELETE CASCADE,
  run_location text NOT NULL,
  check_type text NOT NULL,
  runtime_id text,
  state text NOT NULL CHECK (state IN ('queued', 'leased', 'done')),
  attempt integer NOT NULL DEFAULT 1,
  agent_id uuid,
  claimed_by jsonb NOT NULL DEFAULT '[]',
  lease_expires_at timestamptz,
  scheduled_at timestamptz NOT NULL DEFAULT now(),
  timeout_seconds integer NOT NULL,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz
);
CREATE INDEX jobs_queued ON jobs (private_location_id, scheduled_at) WHERE state = 'queued';
CREATE INDEX jobs_leased ON jobs (lease_expires_at) WHERE state = 'leased';
CREATE INDEX jobs_session ON jobs (session_id);

CREATE TABLE check_results (
  id uuid PRIMARY KEY,
  session_id uuid NOT NULL REFERENCES check_sessions(id) ON DELETE CASCADE,
  job_id uuid NOT NULL UNIQUE REFERENCES jobs(id) ON DELETE CASCADE,
  account_id uuid NOT NULL,
  check_id uuid NOT NULL,
  check_type text NOT NULL,
  name text NOT NULL,
  run_location text NOT NULL,
  result_type text NOT NULL DEFAULT 'FINAL',
  has_errors boolean NOT NULL,
  has_failures boolean NOT NULL,
  is_degraded boolean NOT NULL,
  aborted boolean NOT NULL,
  is_cancelled boolean NOT NULL,
  timed_out boolean NOT NULL DEFAULT false,
  response_time double precision,
  status_code integer,
  timings jsonb,
  error jsonb,
  assertions jsonb NOT NULL DEFAULT '[]',
  details jsonb NOT NULL DEFAULT '{}',
  logs jsonb NOT NULL DEFAULT '[]',
  artifacts jsonb NOT NULL DEFAULT '[]',
  agent_id uuid,
  attempt integer NOT NULL DEFAULT 1,
  started_at timestamptz,
  stopped_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX check_results_check ON check_results (check_id, created_at);
CREATE INDEX check_results_session ON check_results (session_id);

CREATE TABLE artifacts (
  id uuid PRIMARY KEY,
  job_id uuid NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  name text NOT NULL,
  content_type text NOT NULL,
  size integer NOT NULL,
  path text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (job_id, name)
);
`;
