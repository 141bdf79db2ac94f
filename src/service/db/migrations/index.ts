import * as initial from './0001-initial.js';

export interface Migration {
  name: string;
  sql: string;
}

/** Applied in this order; a migration, once released, is never edited, only followed. */
export const migrations: readonly Migration[] = [initial];
