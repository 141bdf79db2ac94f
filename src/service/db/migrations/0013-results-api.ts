export const name = '0013-results-api';

/**
 * The results API: a check's results newest first by when they ran (the run
 * start, or when the service recorded a run that never started), the
 * fastest and slowest runs and the latest certificate of each check without
 * reading its whole history, and secrets every service instance shares
 * (the key that signs artifact links).
 */
export const sql = `
CREATE INDEX check_results_check_ran ON check_results (check_id, (COALESCE(started_at, created_at)) DESC, id DESC);
CREATE INDEX check_results_check_response_time ON check_results (check_id, response_time)
  WHERE response_time IS NOT NULL AND NOT has_errors;
CREATE INDEX check_results_check_tls ON check_results (check_id, created_at) WHERE (details -> 'tls') IS NOT NULL;

CREATE TABLE service_secrets (
  name text PRIMARY KEY,
  value text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
`;
