/** What the harness needs of one job's scrubber (script-scrubber.ts makes the real one). */
export interface ResultScrubber {
  text(text: string): string;
  /** Deep: every string in the value, keys included. */
  value<T>(value: T): T;
}

export interface JobScrubber extends ResultScrubber {
  /** Writes a scrubbed copy of a file; zips (traces) entry by entry. */
  file(input: string, output: string, contentType: string): Promise<void>;
}

export type ScrubberFactory = (secrets: string[], options: { sensitiveHeaders: boolean }) => JobScrubber;
