import type { CheckResult, CheckSession, CheckStatus, SessionResult } from './api';

export type Outcome = 'passing' | 'degraded' | 'failing' | 'running' | 'none' | 'cancelled';

export const OUTCOME_LABEL: Record<Outcome, string> = {
  passing: 'Passing',
  degraded: 'Degraded',
  failing: 'Failing',
  running: 'Running',
  none: 'No runs yet',
  cancelled: 'Cancelled',
};

/** A check's status from its latest finished run (GET /v1/check-statuses). */
export function statusOutcome(status: CheckStatus | undefined): Outcome {
  if (!status || (status.updated_at === null && status.lastCheckRunId === null)) return 'none';
  if (status.hasFailures || status.hasErrors) return 'failing';
  if (status.isDegraded) return 'degraded';
  return 'passing';
}

export function resultOutcome(result: Pick<CheckResult | SessionResult, 'hasFailures' | 'hasErrors' | 'isDegraded' | 'isCancelled'>): Outcome {
  if (result.isCancelled) return 'cancelled';
  if (result.hasFailures || result.hasErrors) return 'failing';
  if (result.isDegraded) return 'degraded';
  return 'passing';
}

export const IN_PROGRESS = new Set(['STARTED', 'PROGRESS', 'PROGRESS_FAILED', 'PROGRESS_DEGRADED']);

export function sessionOutcome(session: CheckSession): Outcome {
  switch (session.status) {
    case 'PASSED':
      return 'passing';
    case 'DEGRADED':
      return 'degraded';
    case 'FAILED':
    case 'TIMED_OUT':
      return 'failing';
    case 'CANCELLED':
      return 'cancelled';
    default:
      return 'running';
  }
}

export const SESSION_LABEL: Record<string, string> = {
  STARTED: 'Waiting for an agent',
  PROGRESS: 'Running',
  PROGRESS_FAILED: 'Running, a location failed',
  PROGRESS_DEGRADED: 'Running, a location degraded',
  PASSED: 'Passed',
  FAILED: 'Failed',
  DEGRADED: 'Degraded',
  TIMED_OUT: 'Timed out',
  CANCELLED: 'Cancelled',
};

export function ms(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  if (value >= 10_000) return `${(value / 1000).toFixed(1)} s`;
  if (value >= 100) return `${Math.round(value)} ms`;
  return `${value.toFixed(1)} ms`;
}

export function percent(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  if (value === 100) return '100 %';
  return `${value.toFixed(value >= 99 ? 2 : 1)} %`;
}

export function bytes(value: number): string {
  if (value < 1024) return `${value} B`;
  if (value < 1024 * 1024) return `${(value / 1024).toFixed(1)} KiB`;
  return `${(value / 1024 / 1024).toFixed(1)} MiB`;
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const timeOnly = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

export function absolute(iso: string | null | undefined): string {
  if (!iso) return '–';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateTime.format(date);
}

export function clock(iso: string | number): string {
  return timeOnly.format(new Date(iso));
}

export function ago(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return 'never';
  const seconds = Math.round((now - new Date(iso).getTime()) / 1000);
  if (!Number.isFinite(seconds)) return '–';
  if (seconds < 5) return 'just now';
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86_400)} d ago`;
}

export function elapsed(fromIso: string, now: number = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - new Date(fromIso).getTime()) / 1000));
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

export const TYPE_LABEL: Record<string, string> = {
  URL: 'URL',
  TCP: 'TCP',
  DNS: 'DNS',
  ICMP: 'ICMP',
  MULTI_STEP: 'Multi-step',
  PLAYWRIGHT: 'Playwright',
  API: 'API',
  BROWSER: 'Browser',
  AGENTIC: 'Agentic',
};

/** The p-th percentile (0–100) of `values`, interpolated linearly as the service's analytics do. */
export function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (rank - low);
}
