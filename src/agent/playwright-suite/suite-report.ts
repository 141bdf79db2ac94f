/**
 * Reads what Playwright's JSON reporter wrote about a whole suite: each test
 * with its project, status, duration and first error, what it attached
 * (traces, screenshots, videos), and the run's counts. Only what a result needs.
 */
import { stripVTControlCharacters } from 'node:util';
import type { PlaywrightTestReport } from '../../protocol/playwright-settings.js';

export interface SuiteAttachment {
  /** The test it belongs to, for the artifact's name. */
  test: string;
  name: string;
  contentType: string;
  path: string;
}

export interface SuiteReport {
  tests: PlaywrightTestReport[];
  attachments: SuiteAttachment[];
  /** Playwright's counts: expected (passed), unexpected (failed), flaky (passed on retry), skipped. */
  stats: { expected: number; unexpected: number; flaky: number; skipped: number };
  durationMs: number;
  /** Errors outside any test: a config that did not load, no test found, a failing global setup. */
  errors: string[];
}

interface JsonError {
  message?: string;
  value?: string;
}
interface JsonResult {
  status: string;
  duration: number;
  errors?: JsonError[];
  error?: JsonError;
  attachments?: { name: string; contentType: string; path?: string }[];
}
interface JsonTest {
  projectName: string;
  status: string;
  results: JsonResult[];
}
interface JsonSpec {
  title: string;
  file: string;
  tests: JsonTest[];
}
interface JsonSuite {
  title: string;
  suites?: JsonSuite[];
  specs?: JsonSpec[];
}
interface JsonReport {
  suites?: JsonSuite[];
  errors?: JsonError[];
  stats?: { duration?: number; expected?: number; unexpected?: number; flaky?: number; skipped?: number };
}

const MAX_ERROR_CHARS = 2000;

export function parseSuiteReport(text: string): SuiteReport {
  const report = JSON.parse(text) as JsonReport;
  const tests: PlaywrightTestReport[] = [];
  const attachments: SuiteAttachment[] = [];
  const walk = (suite: JsonSuite, titles: string[]): void => {
    for (const spec of suite.specs ?? []) {
      const title = [...titles, spec.title].filter(Boolean).join(' › ');
      for (const test of spec.tests) {
        // The last attempt decides, as in Playwright's own summary; retries show as flaky.
        const last = test.results.at(-1);
        const error = last ? firstError(last) : undefined;
        tests.push({
          title,
          project: test.projectName,
          file: spec.file,
          status: statusOf(test, last),
          durationMs: test.results.reduce((sum, result) => sum + result.duration, 0),
          ...(error ? { error } : {}),
        });
        for (const result of test.results) {
          for (const attachment of result.attachments ?? []) {
            if (attachment.path) attachments.push({ test: `${test.projectName}-${title}`, name: attachment.name, contentType: attachment.contentType, path: attachment.path });
          }
        }
      }
    }
    // A file's suite is titled by its path, which `file` already says.
    for (const child of suite.suites ?? []) walk(child, child.title === suite.title ? titles : [...titles, child.title]);
  };
  for (const file of report.suites ?? []) walk(file, []);
  const stats = report.stats ?? {};
  return {
    tests,
    attachments,
    stats: {
      expected: stats.expected ?? 0,
      unexpected: stats.unexpected ?? 0,
      flaky: stats.flaky ?? 0,
      skipped: stats.skipped ?? 0,
    },
    durationMs: Math.round(stats.duration ?? 0),
    errors: (report.errors ?? []).map(errorText).filter((message): message is string => Boolean(message)),
  };
}

function statusOf(test: JsonTest, last: JsonResult | undefined): PlaywrightTestReport['status'] {
  if (test.status === 'flaky') return 'flaky';
  if (test.status === 'skipped' || !last) return 'skipped';
  const status = last.status;
  return status === 'passed' || status === 'failed' || status === 'timedOut' || status === 'interrupted' || status === 'skipped'
    ? status
    : 'failed';
}

function firstError(result: JsonResult): string | undefined {
  return errorText(result.errors?.[0] ?? result.error);
}

function errorText(error: JsonError | undefined): string | undefined {
  const text = error?.message ?? error?.value;
  if (!text) return undefined;
  const plain = stripVTControlCharacters(text).trim();
  return plain.length > MAX_ERROR_CHARS ? `${plain.slice(0, MAX_ERROR_CHARS - 1)}…` : plain;
}
