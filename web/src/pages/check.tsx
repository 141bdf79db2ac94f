import { useMemo, useState } from 'preact/hooks';
import {
  ANALYTICS,
  apiGet,
  type AnalyticsAnswer,
  type Check,
  type CheckResult,
  type CheckSession,
  type CheckStatus,
  type Credentials,
  type ResultPage,
} from '../api';
import { useCredentials } from '../app';
import { palette, TimeChart, type ChartSeries } from '../chart';
import {
  absolute,
  IN_PROGRESS,
  ms,
  OUTCOME_LABEL,
  percentile,
  resultOutcome,
  SESSION_LABEL,
  sessionOutcome,
  statusOutcome,
  TYPE_LABEL,
} from '../format';
import { useNow, usePoll } from '../hooks';
import { href } from '../router';
import { Badge, ErrorNote, Field, Loading, PageTitle, TimeAgo } from '../ui';
import { LiveSessions } from './checks';

const RANGES = {
  '1h': { label: 'Last hour', ms: 3_600_000, bucketMinutes: 5 },
  '24h': { label: 'Last 24 hours', ms: 86_400_000, bucketMinutes: 60 },
  '7d': { label: 'Last 7 days', ms: 7 * 86_400_000, bucketMinutes: 360 },
} as const;
type RangeKey = keyof typeof RANGES;

export function CheckPage({ checkId }: { checkId: string }) {
  const credentials = useCredentials();
  const now = useNow(1000);
  const check = usePoll((signal) => apiGet<Check>(credentials, `/v1/checks/${checkId}`, {}, signal), 60_000, [credentials, checkId]);
  const status = usePoll((signal) => apiGet<CheckStatus>(credentials, `/v1/check-statuses/${checkId}`, {}, signal), 5000, [credentials, checkId]);
  const sessions = usePoll(
    (signal) => apiGet<CheckSession[]>(credentials, '/v1/check-sessions', { checkId, limit: 60 }, signal),
    (data) => (data?.some((session) => IN_PROGRESS.has(session.status)) ? 2000 : 5000),
    [credentials, checkId],
  );
  const [range, setRange] = useState<RangeKey>('24h');

  if (check.error && !check.data) return <ErrorNote error={check.error} what="this check" />;
  if (!check.data) return <Loading what="the check" />;
  const definition = check.data;
  const outcome = statusOutcome(status.data);
  const live = (sessions.data ?? []).filter((session) => IN_PROGRESS.has(session.status));

  return (
    <>
      <nav aria-label="Breadcrumb" class="breadcrumb">
        <a href={href([])}>Checks</a> <span aria-hidden="true">›</span> <span aria-current="page">{definition.name}</span>
      </nav>
      <div class="title-row">
        <PageTitle title={definition.name}>{definition.name}</PageTitle>
        <Badge outcome={outcome} />
      </div>
      <dl class="facts">
        <Field label="Type">{TYPE_LABEL[definition.checkType] ?? definition.checkType}</Field>
        <Field label="Locations">{[...definition.privateLocations, ...definition.locations].join(', ') || '–'}</Field>
        <Field label="Every">{definition.frequency === 0 ? '10 s' : `${definition.frequency} min`}</Field>
        <Field label="State">{[definition.activated ? 'active' : 'paused', definition.muted ? 'muted' : ''].filter(Boolean).join(', ')}</Field>
        <Field label="Last run">
          <TimeAgo iso={status.data?.updated_at} />
          {status.data?.lastRunLocation ? ` at ${status.data.lastRunLocation}` : ''}
        </Field>
        <Field label="Fastest / slowest">
          {ms(status.data?.shortestRun)} / {ms(status.data?.longestRun)}
        </Field>
        {status.data?.sslDaysRemaining !== null && status.data?.sslDaysRemaining !== undefined ? (
          <Field label="Certificate">{status.data.sslDaysRemaining} days left</Field>
        ) : null}
        {definition.tags.length > 0 ? <Field label="Tags">{definition.tags.join(', ')}</Field> : null}
      </dl>

      <LiveSessions sessions={live} checks={[definition]} now={now} title="Sessions in progress" />

      <section aria-labelledby="history-heading">
        <h2 id="history-heading">Status history</h2>
        <ErrorNote error={sessions.error} what="the sessions" />
        {sessions.data ? <StatusHistory sessions={sessions.data} checkId={checkId} /> : <Loading what="the sessions" />}
      </section>

      <section aria-labelledby="chart-heading">
        <div class="title-row">
          <h2 id="chart-heading">Response time per location</h2>
          <div class="segmented" role="group" aria-label="Time range">
            {(Object.keys(RANGES) as RangeKey[]).map((key) => (
              <button key={key} type="button" aria-pressed={range === key} onClick={() => setRange(key)}>
                {RANGES[key].label}
              </button>
            ))}
          </div>
        </div>
        <ResponseTimes credentials={credentials} check={definition} range={range} />
      </section>

      <Results credentials={credentials} check={definition} />
    </>
  );
}

/** One block per run, oldest first, coloured and described by its outcome; a click opens its first problem. */
function StatusHistory({ sessions, checkId }: { sessions: CheckSession[]; checkId: string }) {
  const runs = [...sessions].reverse();
  if (runs.length === 0) return <p class="muted">No runs yet.</p>;
  const counts = new Map<string, number>();
  for (const session of runs) counts.set(SESSION_LABEL[session.status] ?? session.status, (counts.get(SESSION_LABEL[session.status] ?? session.status) ?? 0) + 1);
  const summary = `Last ${runs.length} runs, oldest first: ${[...counts].map(([label, count]) => `${count} ${label.toLowerCase()}`).join(', ')}`;
  return (
    <>
      <p class="small muted">{summary}.</p>
      <ol class="status-bar" aria-label={summary}>
        {runs.map((session) => {
          const outcome = sessionOutcome(session);
          const pick = session.results.find((result) => resultOutcome(result) !== 'passing') ?? session.results[0];
          const label = `${absolute(session.startedAt)}: ${SESSION_LABEL[session.status] ?? session.status}`;
          return (
            <li key={session.checkSessionId} class={`status-block status-${outcome}`} title={label}>
              {pick ? (
                <a href={href(['checks', checkId, 'results', pick.checkResultId])} tabIndex={-1} aria-label={label} />
              ) : (
                <span class="visually-hidden">{label}</span>
              )}
            </li>
          );
        })}
      </ol>
    </>
  );
}

interface ChartData {
  /** The window shown, unix seconds. */
  window: [number, number];
  times: number[];
  series: ChartSeries[];
  /** Rows for the table the chart is also given as. */
  table: { time: number; location: string; p50: number | null; p95: number | null }[];
}

function chartFrom(window: [number, number], points: { time: number; location: string; p50: number | null; p95: number | null }[]): ChartData {
  const times = [...new Set(points.map((point) => point.time))].sort((a, b) => a - b);
  const index = new Map(times.map((time, position) => [time, position]));
  const locations = [...new Set(points.map((point) => point.location))].sort();
  const series: ChartSeries[] = [];
  locations.forEach((location, position) => {
    const p50 = new Array<number | null>(times.length).fill(null);
    const p95 = new Array<number | null>(times.length).fill(null);
    for (const point of points.filter((candidate) => candidate.location === location)) {
      p50[index.get(point.time)!] = point.p50;
      p95[index.get(point.time)!] = point.p95;
    }
    series.push({ label: `${location} p50`, values: p50, colour: palette(position) });
    series.push({ label: `${location} p95`, values: p95, colour: palette(position), dashed: true });
  });
  return { window, times, series, table: [...points].sort((a, b) => a.time - b.time || a.location.localeCompare(b.location)) };
}

async function loadChart(credentials: Credentials, check: Check, rangeKey: RangeKey, signal: AbortSignal): Promise<ChartData> {
  const range = RANGES[rangeKey];
  const to = Date.now();
  const from = to - range.ms;
  const analytics = ANALYTICS[check.checkType];
  if (analytics) {
    const answer = await apiGet<AnalyticsAnswer>(
      credentials,
      `/v1/analytics/${analytics.path}/${check.id}`,
      {
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        aggregationInterval: range.bucketMinutes,
        groupBy: 'runLocation',
        metrics: `${analytics.metric}_p50,${analytics.metric}_p95`,
        limit: 100,
      },
      signal,
    );
    const points = answer.series.flatMap((series) =>
      series.data.map((point) => ({
        time: Date.parse(String(point.timestamp)) / 1000,
        location: series.runLocation ?? 'all',
        p50: typeof point[`${analytics.metric}_p50`] === 'number' ? (point[`${analytics.metric}_p50`] as number) : null,
        p95: typeof point[`${analytics.metric}_p95`] === 'number' ? (point[`${analytics.metric}_p95`] as number) : null,
      })),
    );
    return chartFrom([from / 1000, to / 1000], points);
  }
  // Check types without analytics: percentiles of the stored results, bucket by bucket (at most 500 results).
  const results: CheckResult[] = [];
  let nextId: string | undefined;
  for (let page = 0; page < 5; page += 1) {
    const answer: ResultPage = await apiGet<ResultPage>(
      credentials,
      `/v2/check-results/${check.id}`,
      { from: String(from), to: String(to), limit: 100, nextId },
      signal,
    );
    results.push(...answer.entries);
    if (!answer.nextId) break;
    nextId = answer.nextId;
  }
  const bucketMs = range.bucketMinutes * 60_000;
  const buckets = new Map<string, { time: number; location: string; values: number[] }>();
  for (const result of results) {
    if (result.responseTime === null || !result.startedAt || result.hasErrors) continue;
    const time = from + Math.floor((Date.parse(result.startedAt) - from) / bucketMs) * bucketMs;
    const key = `${time}/${result.runLocation}`;
    const bucket = buckets.get(key) ?? { time: time / 1000, location: result.runLocation, values: [] };
    bucket.values.push(result.responseTime);
    buckets.set(key, bucket);
  }
  return chartFrom([from / 1000, to / 1000], [...buckets.values()].map((bucket) => ({ time: bucket.time, location: bucket.location, p50: percentile(bucket.values, 50), p95: percentile(bucket.values, 95) })));
}

function ResponseTimes({ credentials, check, range }: { credentials: Credentials; check: Check; range: RangeKey }) {
  const chart = usePoll((signal) => loadChart(credentials, check, range, signal), 60_000, [credentials, check.id, check.checkType, range]);
  const caption = `Response time (p50 solid, p95 dashed) per location, ${RANGES[range].label.toLowerCase()}, in buckets of ${RANGES[range].bucketMinutes} minutes`;
  if (chart.error && !chart.data) return <ErrorNote error={chart.error} what="the response times" />;
  if (!chart.data) return <Loading what="the response times" />;
  if (chart.data.times.length === 0) return <p class="muted">No measured runs in this time range.</p>;
  return (
    <figure class="chart-figure">
      <TimeChart times={chart.data.times} series={chart.data.series} window={chart.data.window} label={caption} />
      <figcaption class="small muted">{caption}.</figcaption>
      <details>
        <summary>The same data as a table</summary>
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">{caption}</caption>
            <thead>
              <tr>
                <th scope="col">From</th>
                <th scope="col">Location</th>
                <th scope="col">p50</th>
                <th scope="col">p95</th>
              </tr>
            </thead>
            <tbody>
              {chart.data.table.map((row) => (
                <tr key={`${row.time}/${row.location}`}>
                  <td>{absolute(new Date(row.time * 1000).toISOString())}</td>
                  <td>{row.location}</td>
                  <td>{ms(row.p50)}</td>
                  <td>{ms(row.p95)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

function Results({ credentials, check }: { credentials: Credentials; check: Check }) {
  const [location, setLocation] = useState('');
  const [failuresOnly, setFailuresOnly] = useState(false);
  const [more, setMore] = useState<{ entries: CheckResult[]; nextId: string | null } | undefined>(undefined);
  const [loadingMore, setLoadingMore] = useState(false);
  const query = useMemo(
    () => ({ limit: 20, location: location || undefined, hasFailures: failuresOnly ? true : undefined }),
    [location, failuresOnly],
  );
  const first = usePoll(
    async (signal) => {
      const page = await apiGet<ResultPage>(credentials, `/v2/check-results/${check.id}`, query, signal);
      return page;
    },
    10_000,
    [credentials, check.id, query],
  );
  // The first page is read again every few seconds; older pages were read once: one row per result.
  const entries = [...new Map([...(first.data?.entries ?? []), ...(more?.entries ?? [])].map((result) => [result.id, result])).values()];
  const nextId = more ? more.nextId : (first.data?.nextId ?? null);
  const locations = [...check.privateLocations, ...check.locations];

  const loadMore = async () => {
    if (!nextId) return;
    setLoadingMore(true);
    try {
      const page = await apiGet<ResultPage>(credentials, `/v2/check-results/${check.id}`, { ...query, nextId });
      setMore({ entries: [...(more?.entries ?? []), ...page.entries], nextId: page.nextId });
    } finally {
      setLoadingMore(false);
    }
  };

  return (
    <section aria-labelledby="results-heading">
      <h2 id="results-heading">Results</h2>
      <form class="filters" aria-label="Filter results" onSubmit={(event) => event.preventDefault()}>
        <div class="form-row">
          <label for="results-location">Location</label>
          <select
            id="results-location"
            value={location}
            onChange={(event) => {
              setMore(undefined);
              setLocation(event.currentTarget.value);
            }}
          >
            <option value="">All locations</option>
            {locations.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </div>
        <div class="form-row checkbox">
          <input
            id="results-failures"
            type="checkbox"
            checked={failuresOnly}
            onChange={(event) => {
              setMore(undefined);
              setFailuresOnly(event.currentTarget.checked);
            }}
          />
          <label for="results-failures">Failures only</label>
        </div>
      </form>
      <ErrorNote error={first.error} what="the results" />
      {!first.data && !first.error ? <Loading what="the results" /> : null}
      {first.data && entries.length === 0 ? <p class="muted">No results yet.</p> : null}
      {entries.length > 0 ? (
        <div class="table-wrap">
          <table class="results responsive">
            <caption class="visually-hidden">Results of {check.name}, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Started</th>
                <th scope="col">Location</th>
                <th scope="col">Outcome</th>
                <th scope="col">Response time</th>
                <th scope="col">Detail</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((result) => {
                const outcome = resultOutcome(result);
                return (
                  <tr key={result.id} data-result-id={result.id} data-outcome={outcome}>
                    <td data-label="Started">
                      <a href={href(['checks', check.id, 'results', result.id])}>{absolute(result.startedAt ?? result.created_at)}</a>
                    </td>
                    <td data-label="Location">{result.runLocation}</td>
                    <td data-label="Outcome">
                      <Badge outcome={outcome} label={result.isCancelled ? 'Cancelled' : OUTCOME_LABEL[outcome]} />
                    </td>
                    <td data-label="Response time">{ms(result.responseTime)}</td>
                    <td data-label="Detail" class="small">
                      {[
                        result.statusCode !== null ? `HTTP ${result.statusCode}` : '',
                        result.error ? result.error.code : '',
                        result.attempts > 1 ? `attempt ${result.attempts}` : '',
                        result.artifacts.length > 0 ? `${result.artifacts.length} artifact${result.artifacts.length > 1 ? 's' : ''}` : '',
                      ]
                        .filter(Boolean)
                        .join(' · ') || '–'}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
      {nextId ? (
        <button type="button" class="secondary" disabled={loadingMore} onClick={() => void loadMore()}>
          {loadingMore ? 'Loading…' : 'Show older results'}
        </button>
      ) : null}
    </section>
  );
}
