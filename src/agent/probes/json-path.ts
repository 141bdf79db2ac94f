import { JSONPath } from 'jsonpath-plus';

/**
 * The first value `path` selects in `document`, or undefined when it selects
 * nothing. A path without the leading `$` is taken as relative to the root,
 * as users write `answers[0].data` as often as `$.answers[0].data`. Filter
 * expressions run in jsonpath-plus's safe evaluator, never as JavaScript.
 */
export function queryJsonPath(document: unknown, path: string): unknown {
  const trimmed = path.trim();
  if (trimmed === '' || trimmed === '$') return document;
  const absolute = trimmed.startsWith('$') ? trimmed : `$.${trimmed.replace(/^\./, '')}`;
  const matches = JSONPath<unknown[]>({ path: absolute, json: document as object, wrap: true, eval: 'safe' });
  return matches.length > 0 ? matches[0] : undefined;
}
