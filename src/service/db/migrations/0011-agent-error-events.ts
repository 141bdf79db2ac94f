export const name = '0011-agent-error-events';

/**
 * Error events the agents of a private location report (Sentry's envelope
 * protocol): only the fields the agent may send, newest kept per location.
 */
export const sql = `
CREATE TABLE agent_error_events (
  id uuid PRIMARY KEY,
  private_location_id uuid NOT NULL REFERENCES private_locations(id) ON DELETE CASCADE,
  event_id text NOT NULL,
  occurred_at timestamptz NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  release text,
  platform text,
  runtime text,
  message text,
  exceptions jsonb NOT NULL,
  UNIQUE (private_location_id, event_id)
);
CREATE INDEX agent_error_events_location ON agent_error_events (private_location_id, received_at DESC);
`;
