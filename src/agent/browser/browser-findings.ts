/**
 * What a browser check's pages saw, as the entry file wrote it (browser-entry.ts)
 * into the job's directory. The file is the script's to overwrite, so it is
 * read like a report (a contained regular file, bounded) and every field is
 * checked and cut again here: only well-formed entries, at most
 * FINDINGS_LIMIT of each list, texts at most FINDING_TEXT_LIMIT characters.
 */
import { FINDING_TEXT_LIMIT, FINDINGS_LIMIT } from './browser-entry.js';

export interface ConsoleError {
  source: 'console' | 'pageerror';
  text: string;
  url?: string;
  test?: string;
}

export interface FailedRequest {
  url: string;
  method: string;
  resourceType?: string;
  /** The HTTP status of a response of 400 or more. */
  status?: number;
  /** Why a request got no response at all (`net::ERR_CONNECTION_REFUSED`, …). */
  failure?: string;
  test?: string;
}

export interface WebVitals {
  url: string;
  lcpMs: number | null;
  cls: number | null;
  fcpMs: number | null;
  ttfbMs: number | null;
  domContentLoadedMs: number | null;
  loadMs: number | null;
  test?: string;
}

export interface BrowserFindings {
  consoleErrors: ConsoleError[];
  failedRequests: FailedRequest[];
  webVitals: WebVitals[];
  /** Entries over the limit, counted only; absent when nothing was dropped. */
  dropped?: { consoleErrors: number; failedRequests: number; webVitals: number };
}

export const NO_FINDINGS: BrowserFindings = { consoleErrors: [], failedRequests: [], webVitals: [] };

type Loose = Record<string, unknown>;

export function parseBrowserFindings(text: string): BrowserFindings {
  const raw = JSON.parse(text) as unknown;
  if (!isObject(raw)) return NO_FINDINGS;
  const consoleErrors = list(raw.consoleErrors).flatMap((entry): ConsoleError[] => {
    const source = entry.source === 'pageerror' ? 'pageerror' : entry.source === 'console' ? 'console' : undefined;
    const message = string(entry.text);
    if (!source || message === undefined) return [];
    return [{ source, text: message, ...optional('url', string(entry.url)), ...optional('test', string(entry.test)) }];
  });
  const failedRequests = list(raw.failedRequests).flatMap((entry): FailedRequest[] => {
    const url = string(entry.url);
    const method = string(entry.method);
    if (url === undefined || method === undefined) return [];
    const status = typeof entry.status === 'number' && Number.isInteger(entry.status) && entry.status >= 100 && entry.status < 1000 ? entry.status : undefined;
    return [
      {
        url,
        method: method.slice(0, 20),
        ...optional('resourceType', string(entry.resourceType)?.slice(0, 40)),
        ...optional('status', status),
        ...optional('failure', string(entry.failure)),
        ...optional('test', string(entry.test)),
      },
    ];
  });
  const webVitals = list(raw.webVitals).flatMap((entry): WebVitals[] => {
    const url = string(entry.url);
    if (url === undefined) return [];
    return [
      {
        url,
        lcpMs: number(entry.lcpMs),
        cls: number(entry.cls),
        fcpMs: number(entry.fcpMs),
        ttfbMs: number(entry.ttfbMs),
        domContentLoadedMs: number(entry.domContentLoadedMs),
        loadMs: number(entry.loadMs),
        ...optional('test', string(entry.test)),
      },
    ];
  });
  const droppedRaw = isObject(raw.dropped) ? raw.dropped : {};
  const dropped = {
    consoleErrors: count(droppedRaw.consoleErrors),
    failedRequests: count(droppedRaw.failedRequests),
    webVitals: count(droppedRaw.webVitals),
  };
  return {
    consoleErrors,
    failedRequests,
    webVitals,
    ...(dropped.consoleErrors + dropped.failedRequests + dropped.webVitals > 0 ? { dropped } : {}),
  };
}

function isObject(value: unknown): value is Loose {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function list(value: unknown): Loose[] {
  return Array.isArray(value) ? value.filter(isObject).slice(0, FINDINGS_LIMIT) : [];
}

function string(value: unknown): string | undefined {
  return typeof value === 'string' ? value.slice(0, FINDING_TEXT_LIMIT) : undefined;
}

function number(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? Math.min(value, 1_000_000) : 0;
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
