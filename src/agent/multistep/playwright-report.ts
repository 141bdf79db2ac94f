/**
 * Reads what Playwright's JSON reporter wrote about a check's run: the steps
 * of each test (`test.step`), their durations and errors, the output, the
 * attachments (trace, screenshots, videos). Only the parts a result needs.
 */
import { stripVTControlCharacters } from 'node:util';

export interface StepReport {
  name: string;
  durationMs: number;
  status: 'passed' | 'failed';
  error?: string;
}

export interface AttachmentReport {
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
  suites?: JsonSuite[];
  specs?: { title: string; tests: { status: string; results: JsonResult[] }[] }[];
}
interface JsonReport {
  suites?: JsonSuite[];
  errors?: JsonError[];
}

export function parseRunReport(text: string): RunReport {
  const report = JSON.parse(text) as JsonReport;
  const results: { title: string; status: string; result: JsonResult }[] = [];
  const walk = (suite: JsonSuite): void => {
    for (const spec of suite.specs ?? []) {
      for (const test of spec.tests) {
        // Retries are off; the last result is the one that counts if that ever changes.
        const result = test.results.at(-1);
        if (result) results.push({ title: spec.title, status: test.status, result });
      }
    }
    for (const child of suite.suites ?? []) walk(child);
  };
  for (const suite of report.suites ?? []) walk(suite);

  const errors = [
    ...(report.errors ?? []).map(errorText),
    ...results.flatMap(({ result }) => (result.errors ?? (result.error ? [result.error] : [])).map(errorText)),
  ].filter((message) => message.length > 0);
  const prefix = results.length > 1;
  return {
    passed: errors.length === 0 && results.length > 0 && results.every(({ result }) => ['passed', 'skipped'].includes(result.status)),
    timedOut: results.some(({ result }) => result.status === 'timedOut'),
    tests: results.length,
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
    attachments: results.flatMap(({ result }) =>
      (result.attachments ?? [])
        .filter((attachment): attachment is AttachmentReport => typeof attachment.path === 'string')
        .map(({ name, contentType, path }) => ({ name, contentType, path })),
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
