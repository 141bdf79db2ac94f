export const name = '0016-projects';

/**
 * Projects deployed by the public `checkly` CLI: a project is named by its
 * logical id within an account, and remembers which record each of its
 * constructs became (type + logical id → physical id), so the next deploy
 * updates those records in place and removes the ones gone from the code.
 * Deployments are kept as the CLI follows them (by id, after the POST).
 */
export const sql = `
CREATE TABLE projects (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  logical_id text NOT NULL,
  name text NOT NULL,
  repo_url text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz,
  UNIQUE (account_id, logical_id)
);

CREATE TABLE project_resources (
  project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  resource_type text NOT NULL,
  logical_id text NOT NULL,
  physical_id text NOT NULL,
  PRIMARY KEY (project_id, resource_type, logical_id)
);

CREATE TABLE project_deployments (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  project_logical_id text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('DEPLOY', 'DESTROY')),
  status text NOT NULL,
  result jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX project_deployments_project ON project_deployments (account_id, project_logical_id, created_at);
`;
