import Type from 'typebox';
import type { AnalysisRecord } from '../store/root-cause-analyses.js';
import type { Analysis } from './provider.js';

/**
 * Root cause analyses as the public `checkly` CLI reads them (`checkly rca
 * run|get`). Outpost's analysis says the same things under other names: its
 * category is the classification, its likely cause the root cause, its
 * summary of what failed the user impact, and its suggestions the fix; its
 * evidence cites no artifacts.
 */

export const ChecklyAnalysisSchema = Type.Object(
  {
    id: Type.String(),
    errorGroupId: Type.String(),
    checkId: Type.Union([Type.String(), Type.Null()]),
    analysis: Type.Object({
      classification: Type.String(),
      rootCause: Type.String(),
      userImpact: Type.String(),
      codeFix: Type.Union([Type.String(), Type.Null()], { description: 'The suggestions, one after the other; null without any' }),
      evidence: Type.Array(
        Type.Object({
          artifacts: Type.Array(Type.Object({ name: Type.String(), type: Type.String() }), { description: 'None: Outpost cites no artifacts' }),
          description: Type.String(),
        }),
      ),
      referenceLinks: Type.Null({ description: 'Outpost analyses link nowhere' }),
    }),
    provider: Type.String(),
    model: Type.String(),
    durationMs: Type.Integer({ description: 'From the request to the written analysis, waiting included' }),
    userContext: Type.Union([Type.Array(Type.Object({ text: Type.String(), type: Type.Literal('USER') })), Type.Null()]),
    created_at: Type.String(),
    completed_at: Type.String(),
  },
  { description: 'Answered to a caller that names its account in x-checkly-account (the public checkly CLI)' },
);
export type ChecklyAnalysis = Type.Static<typeof ChecklyAnalysisSchema>;

export interface CompletedAnalysis extends AnalysisRecord {
  provider: string;
  model: string;
  analysis: Analysis;
  completed_at: string;
}

export function isCompleted(record: AnalysisRecord): record is CompletedAnalysis {
  return record.status === 'COMPLETED' && record.provider !== null && record.model !== null && record.analysis !== null && record.completed_at !== null;
}

export function checklyAnalysis(record: CompletedAnalysis): ChecklyAnalysis {
  const { analysis } = record;
  return {
    id: record.id,
    errorGroupId: record.errorGroup.id,
    checkId: record.checkId,
    analysis: {
      classification: analysis.category,
      rootCause: analysis.likelyCause,
      userImpact: analysis.summary,
      codeFix: analysis.suggestions.length > 0 ? analysis.suggestions.join(' ') : null,
      evidence: analysis.evidence.map((description) => ({ artifacts: [], description })),
      referenceLinks: null,
    },
    provider: record.provider,
    model: record.model,
    durationMs: Math.max(0, Date.parse(record.completed_at) - Date.parse(record.created_at)),
    userContext: record.userContext === null ? null : [{ text: record.userContext, type: 'USER' }],
    created_at: record.created_at,
    completed_at: record.completed_at,
  };
}
