import type { Queryable } from '../db/database.js';

export interface ArtifactRow {
  id: string;
  job_id: string;
  name: string;
  content_type: string;
  size: number;
  path: string;
  created_at: Date;
}

/** One stored artifact by id, whoever's it is: its signed link is what says the caller may have it. */
export async function getArtifact(db: Queryable, id: string): Promise<ArtifactRow | undefined> {
  const [row] = await db.query<ArtifactRow>('SELECT * FROM artifacts WHERE id = $1', [id]);
  return row;
}

export interface UploadedArtifact {
  id: string;
  jobId: string;
  name: string;
  contentType: string;
  size: number;
  path: string;
}

/** Records an upload; an upload under a name the job already has replaces it (the id stays the first one's). */
export async function upsertArtifact(db: Queryable, artifact: UploadedArtifact): Promise<void> {
  await db.query(
    `INSERT INTO artifacts (id, job_id, name, content_type, size, path) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (job_id, name) DO UPDATE SET content_type = EXCLUDED.content_type,
       size = EXCLUDED.size, path = EXCLUDED.path, created_at = now()`,
    [artifact.id, artifact.jobId, artifact.name, artifact.contentType, artifact.size, artifact.path],
  );
}
