export const name = '0015-job-lanes-and-retries';

/**
 * Each job carries its lane (protocol laneOfJob: an API check with scripts
 * runs in the script lane), and claims choose per lane by it. Retries: a
 * failed location result may be followed by a new job for the same session
 * and location (`retry` counts them, 0 for the first run); results keep the
 * attempts (result_type ATTEMPT) and the final one says how many retries
 * came before it.
 */
export const sql = `
ALTER TABLE jobs ADD COLUMN lane text NOT NULL DEFAULT 'uptime' CHECK (lane IN ('uptime', 'script'));
UPDATE jobs SET lane = 'script' WHERE check_type IN ('MULTI_STEP', 'BROWSER', 'PLAYWRIGHT');
ALTER TABLE jobs ADD COLUMN retry integer NOT NULL DEFAULT 0;
CREATE INDEX jobs_queued_lane ON jobs (private_location_id, lane, scheduled_at) WHERE state = 'queued';
ALTER TABLE check_results ADD COLUMN retries integer NOT NULL DEFAULT 0;
`;
