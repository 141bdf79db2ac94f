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
