/**
 * The user API as the dashboard calls it: `Authorization: Bearer <API key>`
 * and `x-service-account: <account id>` on every call, the pair kept in this
 * tab's sessionStorage only (never a cookie, never in a URL).
 */

export interface Credentials {
  accountId: string;
  apiKey: string;
}

const STORAGE_KEY = 'outpost.dashboard.credentials';

export function loadCredentials(): Credentials | undefined {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    if (!raw) return undefined;
    const parsed = JSON.parse(raw) as Partial<Credentials>;
    return typeof parsed.accountId === 'string' && typeof parsed.apiKey === 'string'
      ? { accountId: parsed.accountId, apiKey: parsed.apiKey }
      : undefined;
  } catch {
    return undefined;
  }
}

export function saveCredentials(credentials: Credentials): void {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(credentials));
}

export function clearCredentials(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Seconds to wait, for a 429. */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  get unauthorized(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

/** What the rate limiter said last: the pollers slow down when little is left. */
export const budget = { limit: 600, remaining: 600 };

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();
/** Called when the key stops working (revoked, or another account's): the app logs out. */
export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

export async function apiGet<T>(
  credentials: Credentials,
  path: string,
  query: Record<string, string | number | boolean | undefined> = {},
  signal?: AbortSignal,
): Promise<T> {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, String(value));
  const url = search.size > 0 ? `${path}?${search.toString()}` : path;
  const response = await fetch(url, {
    headers: { authorization: `Bearer ${credentials.apiKey}`, 'x-service-account': credentials.accountId, accept: 'application/json' },
    cache: 'no-store',
    credentials: 'omit',
    signal,
  });
  const limit = Number(response.headers.get('x-ratelimit-limit'));
  const remaining = Number(response.headers.get('x-ratelimit-remaining'));
  if (Number.isFinite(limit) && limit > 0) budget.limit = limit;
  if (response.headers.has('x-ratelimit-remaining') && Number.isFinite(remaining)) budget.remaining = remaining;
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      const body = (await response.json()) as { message?: unknown };
      if (typeof body.message === 'string') message = body.message;
    } catch {
      // not JSON: keep the status line
    }
    const retryAfter = Number(response.headers.get('retry-after'));
    const error = new ApiError(response.status, message, Number.isFinite(retryAfter) ? retryAfter : undefined);
    if (error.unauthorized) for (const listener of unauthorizedListeners) listener();
    throw error;
  }
  return (await response.json()) as T;
}

/** Checks that the pair opens the account: the login form's test. */
export async function verifyCredentials(credentials: Credentials): Promise<void> {
  const response = await fetch('/v1/check-statuses', {
    headers: { authorization: `Bearer ${credentials.apiKey}`, 'x-service-account': credentials.accountId },
    cache: 'no-store',
    credentials: 'omit',
  });
  if (response.ok) return;
  let message = `The service answered ${response.status}`;
  try {
    const body = (await response.json()) as { message?: unknown };
    if (typeof body.message === 'string') message = body.message;
  } catch {
    // keep the status
  }
  throw new ApiError(response.status, message);
}

/** An artifact link made relative to this origin: the page may load only from here (CSP), whatever PUBLIC_URL says. */
export function sameOrigin(link: string): string {
  try {
    const url = new URL(link, location.origin);
    return `${url.pathname}${url.search}`;
  } catch {
    return link;
  }
}

// ---- shapes of the answers the dashboard reads -------------------------------------------------

export interface Check {
  id: string;
  checkType: string;
  name: string;
  activated: boolean;
  muted: boolean;
  frequency: number;
  locations: string[];
  privateLocations: string[];
  tags: string[];
  created_at: string;
  updated_at: string | null;
  [field: string]: unknown;
}

export interface CheckStatus {
  name: string;
  checkId: string;
  hasFailures: boolean;
  hasErrors: boolean;
  isDegraded: boolean;
  longestRun: number | null;
  shortestRun: number | null;
  lastRunLocation: string | null;
  lastCheckRunId: string | null;
  sslDaysRemaining: number | null;
  created_at: string;
  updated_at: string | null;
}

export interface Artifact {
  name: string;
  contentType: string;
  size: number;
  uploaded: boolean;
  error: string | null;
  id: string | null;
  link: string | null;
  linkExpiresAt: string | null;
  traceViewerUrl: string | null;
}

export interface AssertionResult {
  source: string;
  property: string;
  comparison: string;
  target: string;
  actual: string | number | boolean | null;
  passed: boolean;
}

export interface LogLine {
  time: string;
  level: string;
  message: string;
}

export interface CheckResult {
  id: string;
  checkId: string;
  checkSessionId: string;
  name: string;
  checkType: string;
  runLocation: string;
  resultType: string;
  hasFailures: boolean;
  hasErrors: boolean;
  isDegraded: boolean;
  overMaxResponseTime: boolean;
  aborted: boolean;
  isCancelled: boolean;
  responseTime: number | null;
  statusCode: number | null;
  startedAt: string | null;
  stoppedAt: string | null;
  created_at: string;
  attempts: number;
  timings: Record<string, number | null> | null;
  error: { code: string; message: string } | null;
  assertions: AssertionResult[];
  details: Record<string, unknown>;
  logs: LogLine[];
  artifacts: Artifact[];
}

export interface ResultPage {
  length: number;
  entries: CheckResult[];
  nextId: string | null;
}

export interface SessionResult {
  checkResultId: string;
  runLocation: string;
  hasErrors: boolean;
  hasFailures: boolean;
  isDegraded: boolean;
  isCancelled: boolean;
  responseTime?: number | null;
  [field: string]: unknown;
}

export interface CheckSession {
  checkSessionId: string;
  checkId: string;
  checkType: string;
  status: string;
  startedAt: string;
  timeElapsed: number;
  runLocations: string[];
  name: string;
  stoppedAt: string | null;
  runSource: string | null;
  results: SessionResult[];
}

export interface PrivateLocation {
  id: string;
  name: string;
  slugName: string;
  icon: string | null;
  created_at: string;
  lastSeen: string | null;
  agentCount: number;
  queuedJobs?: number;
  runningJobs?: number;
  runningAgents: { agentId: string; hostname: string; version: string; mode: string; lastSeen: string }[];
  keys: { id: string; maskedKey: string; created_at: string }[];
}

export interface AnalyticsAnswer {
  checkId: string;
  from: string;
  to: string;
  series: { runLocation?: string; data: Record<string, number | string | null>[] }[];
}

/** Check types with GET /v1/analytics/…/{id}, by the path and the name of their response-time metric. */
export const ANALYTICS: Record<string, { path: string; metric: string } | undefined> = {
  URL: { path: 'url-monitors', metric: 'responseTime' },
  TCP: { path: 'tcp-checks', metric: 'total' },
  DNS: { path: 'dns-monitors', metric: 'responseTime' },
  ICMP: { path: 'icmp-monitors', metric: 'latency' },
};

/** Every check of the account: /v1/checks pages through 100 at a time. */
export async function listAllChecks(credentials: Credentials, signal?: AbortSignal): Promise<Check[]> {
  const checks: Check[] = [];
  for (let page = 1; page <= 50; page += 1) {
    const batch = await apiGet<Check[]>(credentials, '/v1/checks', { limit: 100, page }, signal);
    checks.push(...batch);
    if (batch.length < 100) break;
  }
  return checks;
}
