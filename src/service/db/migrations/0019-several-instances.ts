export const name = '0019-several-instances';

/**
 * What instances of the service on one database share beyond the data.
 *
 * rate_limit_windows: the user API's rate-limit windows, one row per counted
 * key (a hashed API key, per route for routes with a budget of their own).
 * Counts are worth nothing after a crash: the table is UNLOGGED, so counting
 * writes no WAL (and a standby has no rows).
 *
 * lease_sweeps: one row, when any instance last swept expired leases, so an
 * instance that starts while others sweep does not give every lease a grace
 * period meant for when nobody could sweep.
 */
export const sql = `
CREATE UNLOGGED TABLE rate_limit_windows (
  key text PRIMARY KEY,
  hits integer NOT NULL,
  resets_at timestamptz NOT NULL
);
CREATE INDEX rate_limit_windows_resets_at ON rate_limit_windows (resets_at);
CREATE TABLE lease_sweeps (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  last_at timestamptz
);
INSERT INTO lease_sweeps (id, last_at) VALUES (true, NULL);
`;
