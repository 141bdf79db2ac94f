import type { Queryable } from '../db/database.js';
import type { Logger } from '../../logging.js';
import { claimNextPendingAnalysis, completeAnalysis, retryAnalysisIn } from '../store/root-cause-analyses.js';
import { BuiltinAnalyser } from './builtin-analyser.js';
import type { Analysis, AnalysisProvider } from './provider.js';

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
  const claimed = await claimNextPendingAnalysis(db, CLAIM_SECONDS);
  if (!claimed) return 0;
  let answer: { analysis: Analysis; by: AnalysisProvider };
  try {
    answer = { analysis: await provider.analyse(claimed.input, signal), by: provider };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    if (provider !== builtin && claimed.attempts < PROVIDER_ATTEMPTS) {
      logger.warn({ analysisId: claimed.id, attempt: claimed.attempts, err: reason }, 'analysis provider failed; will retry');
      await retryAnalysisIn(db, claimed.id, (retryBaseMs * 2 ** (claimed.attempts - 1)) / 1000);
      return 1;
    }
    logger.warn({ analysisId: claimed.id, err: reason }, 'analysis provider gave up; the built-in analyser answers');
    const fallback = await builtin.analyse(claimed.input);
    fallback.evidence.push(`The configured analyser (${provider.provider}, ${provider.model}) failed ${claimed.attempts} times (${reason}); this is the built-in analysis.`);
    answer = { analysis: fallback, by: builtin };
  }
  await completeAnalysis(db, claimed.id, answer.analysis, answer.by);
  return 1;
}

export function builtinAnalyser(): AnalysisProvider {
  return builtin;
}
