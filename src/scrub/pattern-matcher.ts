/**
 * Finds many literal patterns in a text at once and replaces them,
 * leftmost first and, of the patterns starting at the same place, the longest
 * (so a full base64 encoding wins over its inner fragment).
 *
 * Short patterns go into alternation RegExps, longest first, which V8 runs as
 * native code: about 200 MB/s for 5 secrets (some ten forms each), 100 MB/s
 * for 20, 30 MB/s for 100, as each position is tried against more
 * alternatives. Long patterns (the forms of a secret of kilobytes) would make
 * an alternation too large to compile; each is found with indexOf, which skips
 * ahead by the pattern's length.
 */

export interface Replaced {
  /** The text up to `consumed`, every match in it replaced. */
  output: string;
  /** How much of the input `output` stands for: at least `until`, more when a match ran past it. */
  consumed: number;
}

interface Match {
  start: number;
  end: number;
}

interface Searcher {
  find(text: string, from: number): Match | undefined;
}

/** Longer patterns are searched with indexOf rather than put into an alternation. */
const ALTERNATION_PATTERN_MAX = 256;
/**
 * V8 stops optimizing an expression whose source passes about 20 KB (100
 * secrets in one expression ran 8 times slower than split in two), and refuses
 * to compile far larger ones.
 */
const ALTERNATION_SOURCE_MAX = 16 * 1024;

export class PatternMatcher {
  /** Length of the longest pattern; 0 when there are none. */
  readonly longest: number;
  readonly #searchers: Searcher[];

  constructor(patterns: Iterable<string>) {
    const distinct = [...new Set(patterns)].filter((pattern) => pattern.length > 0);
    distinct.sort((a, b) => b.length - a.length);
    this.longest = distinct[0]?.length ?? 0;
    this.#searchers = [
      ...distinct.filter((pattern) => pattern.length > ALTERNATION_PATTERN_MAX).map(literalSearcher),
      ...alternationSearchers(distinct.filter((pattern) => pattern.length <= ALTERNATION_PATTERN_MAX)),
    ];
  }

  get empty(): boolean {
    return this.#searchers.length === 0;
  }

  replaceAll(text: string, replacement: string): string {
    return this.replaceBefore(text, text.length, replacement).output;
  }

  /**
   * Replaces the matches that start before `until`. A stream passes the point
   * past which a match could still run into data not yet read, and keeps the
   * rest of the text for next time.
   */
  replaceBefore(text: string, until: number, replacement: string): Replaced {
    const next: (Match | undefined | null)[] = this.#searchers.map(() => null);
    const parts: string[] = [];
    let position = 0;
    for (;;) {
      let best: Match | undefined;
      for (let index = 0; index < this.#searchers.length; index++) {
        let found = next[index];
        // null: not looked for yet, or the last find now lies behind `position`.
        if (found === null || (found !== undefined && found.start < position)) {
          found = this.#searchers[index]!.find(text, position);
          next[index] = found;
        }
        if (found === undefined) continue;
        if (best === undefined || found.start < best.start || (found.start === best.start && found.end > best.end)) {
          best = found;
        }
      }
      if (best === undefined || best.start >= until) break;
      parts.push(text.slice(position, best.start), replacement);
      position = best.end;
    }
    const consumed = Math.max(position, until);
    parts.push(text.slice(position, consumed));
    return { output: parts.join(''), consumed };
  }
}

function literalSearcher(pattern: string): Searcher {
  return {
    find(text, from) {
      const start = text.indexOf(pattern, from);
      return start === -1 ? undefined : { start, end: start + pattern.length };
    },
  };
}

/** Patterns sorted longest first, grouped into as few RegExps as the size cap allows. */
function alternationSearchers(patterns: string[]): Searcher[] {
  const searchers: Searcher[] = [];
  let group: string[] = [];
  let size = 0;
  for (const pattern of patterns) {
    const source = escapeLiteral(pattern);
    if (group.length > 0 && size + source.length + 1 > ALTERNATION_SOURCE_MAX) {
      searchers.push(alternationSearcher(group));
      group = [];
      size = 0;
    }
    group.push(source);
    size += source.length + 1;
  }
  if (group.length > 0) searchers.push(alternationSearcher(group));
  return searchers;
}

function alternationSearcher(sources: string[]): Searcher {
  const expression = new RegExp(sources.join('|'), 'g');
  return {
    find(text, from) {
      expression.lastIndex = from;
      const match = expression.exec(text);
      return match === null ? undefined : { start: match.index, end: match.index + match[0].length };
    },
  };
}

/** Every code unit but letters and digits as \uXXXX: no character keeps a meaning in the expression. */
function escapeLiteral(pattern: string): string {
  return pattern.replace(/[^A-Za-z0-9]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
