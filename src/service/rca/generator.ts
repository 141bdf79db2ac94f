import type { Queryable } from '../db/database.js';
import type { Logger } from '../../logging.js';
import { BuiltinAnalyser } from './builtin-analyser.js';
import type { Analysis, AnalysisInput, AnalysisProvider } from './provider.js';

/** Tries with the configured provider before the built-in analyser writes the analysis instead. */
export const PROVIDER_ATTEMPTS = 3;
/** How long a claimed analysis is one generator's before another may take it over. */
const CLAIM_SECONDS = 300;

const builtin = new BuiltinAnalyser();

/**
 * Writes the next pending analysis, if any: claims it, asks the provider,
 * stores the answer as COMPLETED. A provider that fails is asked again on a
 * later round (after a pause that doubles); after PROVIDER_ATTEMPTS the
 * built-in analyser answers, and the evidence says why.
 */
export async function generateNextAnalysis(
  db: Queryable,
  provider: AnalysisProvider,
  logger: Logger,
  retryBaseMs: number,
  signal: AbortSignal,
): Promise<number> {
  const [claimed] = await db.query<{ id: string; input: AnalysisInput; attempts: number }>(
    `UPDATE root_cause_analyses SET attempts = attempts + 1, claimed_until = now() + make_interval(secs => $1)
     WHERE id = (SELECT id FROM root_cause_analyses
                 WHERE status = 'PENDING' AND (claimed_until IS NULL OR claimed_until <= now())
                 ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
     RETURNING id, input, attempts`,
    [CLAIM_SECONDS],
  );
  if (!claimed) return 0;
  let answer: { analysis: Analysis; by: AnalysisProvider };
  try {
    answer = { analysis: await provider.analyse(claimed.input, signal), by: provider };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    if (provider !== builtin && claimed.attempts < PROVIDER_ATTEMPTS) {
      logger.warn({ analysisId: claimed.id, attempt: claimed.attempts, err: reason }, 'analysis provider failed; will retry');
      await db.query('UPDATE root_cause_analyses SET claimed_until = now() + make_interval(secs => $2) WHERE id = $1', [
        claimed.id,
        (retryBaseMs * 2 ** (claimed.attempts - 1)) / 1000,
      ]);
      return 1;
    }
    logger.warn({ analysisId: claimed.id, err: reason }, 'analysis provider gave up; the built-in analyser answers');
    const fallback = await builtin.analyse(claimed.input);
    fallback.evidence.push(`The configured analyser (${provider.provider}, ${provider.model}) failed ${claimed.attempts} times (${reason}); this is the built-in analysis.`);
    answer = { analysis: fallback, by: builtin };
  }
  await db.query(
    `UPDATE root_cause_analyses SET status = 'COMPLETED', analysis = $2, provider = $3, model = $4, completed_at = now(),
       claimed_until = NULL
     WHERE id = $1`,
    [claimed.id, JSON.stringify(answer.analysis), answer.by.provider, answer.by.model],
  );
  return 1;
}

export function builtinAnalyser(): AnalysisProvider {
  return builtin;
}
