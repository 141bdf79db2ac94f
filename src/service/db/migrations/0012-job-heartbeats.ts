export const name = '0012-job-heartbeats';

/**
 * Short leases renewed by one heartbeat per agent: a job knows when its agent
 * said it started (an expired lease of a job never started is no spent
 * attempt), and an agent that said goodbye claims nothing more.
 */
export const sql = `
ALTER TABLE jobs ADD COLUMN started_at timestamptz;
ALTER TABLE agents ADD COLUMN stopped_at timestamptz;
CREATE INDEX jobs_leased_by_agent ON jobs (agent_id) WHERE state = 'leased';
`;
