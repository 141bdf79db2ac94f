import Type from 'typebox';
import type { ErrorGroup, FailedResult } from './error-groups.js';

/** What an analysis is given: the group, what it belongs to, and up to 20 of its failed results, newest first. */
export interface AnalysisInput {
  subject: 'CHECK_ERROR_GROUP' | 'TEST_SESSION_ERROR_GROUP';
  check: { id: string; name: string; checkType: string };
  errorGroup: ErrorGroup;
  results: FailedResult[];
  /** When the check last passed before the group's first failure, if it did in the window looked at. */
  lastPassedAt: string | null;
  /** What the person who asked for the analysis added, for a model to take into account. */
  userContext?: string;
}

export const AnalysisSchema = Type.Object({
  summary: Type.String({ minLength: 1, maxLength: 2000 }),
  category: Type.String({ minLength: 1, maxLength: 64 }),
  likelyCause: Type.String({ minLength: 1, maxLength: 4000 }),
  evidence: Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 50 }),
  suggestions: Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 50 }),
});
export type Analysis = Type.Static<typeof AnalysisSchema>;

/**
 * Writes an analysis. The service ships a built-in analyser; an external
 * model plugs in behind the same interface (see http-provider.ts).
 */
export interface AnalysisProvider {
  /** Who answered, as the record names it. */
  readonly provider: string;
  readonly model: string;
  analyse(input: AnalysisInput, signal: AbortSignal): Promise<Analysis>;
}
