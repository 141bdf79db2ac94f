/**
 * Reads what Playwright's JSON reporter wrote about a check's run: each
 * test's outcome, the steps of each test (`test.step`), their durations and
 * errors, the output, the attachments (trace, screenshots, videos) and the
 * test each belongs to. Only the parts a result needs.
 */
import { stripVTControlCharacters } from 'node:util';
import type { PlaywrightTestReport } from '../../protocol/playwright-settings.js';
import { parseSuiteReport } from '../playwright-suite/suite-report.js';

export interface StepReport {
  name: string;
  durationMs: number;
  status: 'passed' | 'failed';
  error?: string;
}

export interface AttachmentReport {
  /** The full title of the test it belongs to (`describe › test`), for the artifact's name. */
  test: string;
  name: string;
  contentType: string;
  path: string;
}

export interface OutputLine {
  stream: 'stdout' | 'stderr';
  text: string;
}

export interface RunReport {
  /** Every test passed (or was skipped on purpose). */
  passed: boolean;
  timedOut: boolean;
  /** How many tests the file held; 0 means the script declared none or did not load. */
  tests: number;
  /** Each test's outcome, read as a suite check's report is (suite-report.ts): titles with their describe blocks. */
  outcomes: Pick<PlaywrightTestReport, 'title' | 'status' | 'durationMs' | 'error'>[];
  durationMs: number;
  steps: StepReport[];
  /** The first error, for the result's message. */
  error: string | null;
  output: OutputLine[];
  attachments: AttachmentReport[];
}

interface JsonError {
  message?: string;
  value?: string;
}
interface JsonStep {
  title: string;
  duration: number;
  error?: JsonError;
}
interface JsonResult {
  status: string;
  duration: number;
  errors?: JsonError[];
  error?: JsonError;
  steps?: JsonStep[];
  stdout?: { text?: string; buffer?: string }[];
  stderr?: { text?: string; buffer?: string }[];
  attachments?: { name: string; contentType: string; path?: string }[];
}
interface JsonSuite {
  title?: string;
  suites?: JsonSuite[];
  specs?: { title: string; tests: { status: string; results: JsonResult[] }[] }[];
}
interface JsonReport {
  suites?: JsonSuite[];
  errors?: JsonError[];
}

export function parseRunReport(text: string): RunReport {
  const report = JSON.parse(text) as JsonReport;
  const results: { title: string; fullTitle: string; status: string; result: JsonResult }[] = [];
  const walk = (suite: JsonSuite, titles: string[]): void => {
    for (const spec of suite.specs ?? []) {
      const fullTitle = [...titles, spec.title].filter(Boolean).join(' › ');
      for (const test of spec.tests) {
        // Retries are off; the last result is the one that counts if that ever changes.
        const result = test.results.at(-1);
        if (result) results.push({ title: spec.title, fullTitle, status: test.status, result });
      }
    }
    // A file's suite is titled by its path; describe blocks add theirs, as in suite-report.ts.
    for (const child of suite.suites ?? []) walk(child, child.title === suite.title ? titles : [...titles, child.title ?? '']);
  };
  for (const suite of report.suites ?? []) walk(suite, []);

  const errors = [
    ...(report.errors ?? []).map(errorText),
    ...results.flatMap(({ result }) => (result.errors ?? (result.error ? [result.error] : [])).map(errorText)),
  ].filter((message) => message.length > 0);
  const prefix = results.length > 1;
  return {
    passed: errors.length === 0 && results.length > 0 && results.every(({ result }) => ['passed', 'skipped'].includes(result.status)),
    timedOut: results.some(({ result }) => result.status === 'timedOut'),
    tests: results.length,
    outcomes: parseSuiteReport(text).tests.map(({ title, status, durationMs, error }) => ({ title, status, durationMs, ...(error ? { error } : {}) })),
    durationMs: results.reduce((total, { result }) => total + result.duration, 0),
    steps: results.flatMap(({ title, result }) =>
      (result.steps ?? []).map((step) => ({
        name: prefix ? `${title} › ${step.title}` : step.title,
        durationMs: step.duration,
        status: step.error ? ('failed' as const) : ('passed' as const),
        ...(step.error ? { error: errorText(step.error) } : {}),
      })),
    ),
    error: errors[0] ?? null,
    output: results.flatMap(({ result }) => [
      ...(result.stdout ?? []).map((entry) => ({ stream: 'stdout' as const, text: chunkText(entry) })),
      ...(result.stderr ?? []).map((entry) => ({ stream: 'stderr' as const, text: chunkText(entry) })),
    ]),
    attachments: results.flatMap(({ fullTitle, result }) =>
      (result.attachments ?? []).flatMap(({ name, contentType, path }) =>
        typeof path === 'string' ? [{ test: fullTitle, name, contentType, path }] : [],
      ),
    ),
  };
}

function errorText(error: JsonError): string {
  return stripVTControlCharacters(error.message ?? error.value ?? '').trim();
}

function chunkText(entry: { text?: string; buffer?: string }): string {
  if (entry.text !== undefined) return entry.text;
  return entry.buffer ? Buffer.from(entry.buffer, 'base64').toString('utf8') : '';
}
