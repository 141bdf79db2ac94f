import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { ApiError } from './api';
import { absolute, ago, OUTCOME_LABEL, type Outcome } from './format';
import { useNow } from './hooks';

const OUTCOME_ICON: Record<Outcome, string> = {
  passing: '✓',
  degraded: '!',
  failing: '✕',
  running: '…',
  none: '–',
  cancelled: '⊘',
};

/** An outcome in words, with a colour and a symbol so colour is never the only sign. */
export function Badge({ outcome, label }: { outcome: Outcome; label?: string }) {
  return (
    <span class={`badge badge-${outcome}`} data-outcome={outcome}>
      <span aria-hidden="true" class="badge-icon">
        {OUTCOME_ICON[outcome]}
      </span>
      {label ?? OUTCOME_LABEL[outcome]}
    </span>
  );
}

export function TimeAgo({ iso }: { iso: string | null | undefined }) {
  const now = useNow(5000);
  if (!iso) return <span>never</span>;
  return (
    <time dateTime={iso} title={absolute(iso)}>
      {ago(iso, now)}
    </time>
  );
}

/** The page's heading, focused when the page changes so screen readers announce it. */
export function PageTitle({ children, title }: { children: ComponentChildren; title: string }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Outpost`;
    heading.current?.focus({ preventScroll: true });
  }, [title]);
  return (
    <h1 ref={heading} tabIndex={-1}>
      {children}
    </h1>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

export function ErrorNote({ error, what }: { error: Error | undefined; what: string }) {
  if (!error) return null;
  const hint = error instanceof ApiError && error.status === 429 ? ' Too many calls for this API key: trying again shortly.' : '';
  return (
    <p class="error-note" role="alert">
      Could not load {what}: {error.message}.{hint}
    </p>
  );
}

/** A compact line of response times (oldest left), failed runs marked; described in words for screen readers. */
export function Sparkline({ points, label }: { points: { value: number | null; failed: boolean }[]; label: string }) {
  const width = 120;
  const height = 28;
  const values = points.map((point) => point.value).filter((value): value is number => value !== null);
  if (points.length === 0 || values.length === 0) {
    return <span class="muted">no data</span>;
  }
  const max = Math.max(...values);
  const min = Math.min(...values);
  const span = max - min || 1;
  const step = points.length > 1 ? width / (points.length - 1) : 0;
  const y = (value: number) => height - 3 - ((value - min) / span) * (height - 6);
  const coordinates = points.map((point, index) => ({ x: points.length > 1 ? index * step : width / 2, y: point.value === null ? null : y(point.value), failed: point.failed }));
  const line = coordinates
    .filter((point) => point.y !== null)
    .map((point) => `${point.x.toFixed(1)},${point.y!.toFixed(1)}`)
    .join(' ');
  return (
    <svg class="sparkline" width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="img" aria-label={label}>
      <title>{label}</title>
      <polyline points={line} fill="none" class="sparkline-line" stroke-width="1.5" />
      {coordinates.map((point, index) =>
        point.failed ? <circle key={index} cx={point.x} cy={point.y ?? height - 3} r="2.5" class="sparkline-failed" /> : null,
      )}
    </svg>
  );
}

export function Field({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="field">
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}
