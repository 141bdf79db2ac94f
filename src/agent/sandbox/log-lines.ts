/**
 * A script's output as a result's log: one entry per non-empty line, terminal
 * codes stripped, scrubbed, each line and the whole log capped so a script
 * that prints without end cannot swell its result.
 */
import { stripVTControlCharacters } from 'node:util';
import type { Result } from '../../protocol/agent-api.js';

export const MAX_LOG_LINES = 1000;
export const MAX_LOG_LINE = 10_000;

export class LogLines {
  readonly lines: Result['logs'] = [];

  constructor(private readonly scrub: { text(text: string): string }) {}

  get full(): boolean {
    return this.lines.length >= MAX_LOG_LINES;
  }

  add(level: string, text: string): this {
    const time = new Date().toISOString();
    for (const line of text.split('\n')) {
      if (line.trim().length === 0) continue;
      if (this.full) break;
      this.lines.push({ time, level, message: truncateLine(this.scrub.text(stripVTControlCharacters(line))) });
    }
    return this;
  }
}

export function truncateLine(text: string): string {
  return text.length > MAX_LOG_LINE ? `${text.slice(0, MAX_LOG_LINE - 1)}…` : text;
}
