import { useEffect, useMemo, useRef } from 'preact/hooks';
import {
  ANALYTICS,
  apiGet,
  listAllChecks,
  type AnalyticsAnswer,
  type Check,
  type CheckSession,
  type CheckStatus,
  type Credentials,
} from '../api';
import { useCredentials } from '../app';
import { elapsed, IN_PROGRESS, ms, OUTCOME_LABEL, percent, resultOutcome, SESSION_LABEL, sessionOutcome, statusOutcome, TYPE_LABEL, type Outcome } from '../format';
import { useNow, usePoll } from '../hooks';
import { href, replaceQuery, type Route } from '../router';
import { Badge, ErrorNote, Loading, PageTitle, Sparkline, TimeAgo } from '../ui';

/** Sessions read per check for the list: enough for the sparkline and a day of a 30-minute check. */
const SESSIONS_PER_CHECK = 50;

/** Runs `work` over `items`, at most `limit` at once. */
export async function pool<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!);
      }
    }),
  );
  return results;
}

export interface Activity {
  sessions: CheckSession[];
}

/** Each check's latest sessions: what runs now, and the recent response times. */
export function useActivity(credentials: Credentials, checks: Check[] | undefined) {
  const ids = (checks ?? []).map((check) => check.id).join(',');
  return usePoll(
    async (signal) => {
      const list = checks ?? [];
      const answers = await pool(list, 4, (check) =>
        apiGet<CheckSession[]>(credentials, '/v1/check-sessions', { checkId: check.id, limit: SESSIONS_PER_CHECK }, signal).catch(
          () => undefined,
        ),
      );
      return new Map(list.map((check, index) => [check.id, { sessions: answers[index] ?? [] } satisfies Activity]));
    },
    // ~2.5 calls a second at most, whatever the number of checks: well inside the API key's 600 a minute.
    () => Math.max(5000, (checks?.length ?? 0) * 400),
    [credentials, ids],
  );
}

/** 24-hour availability from the analytics of the check types that have them. */
function useAvailability(credentials: Credentials, checks: Check[] | undefined) {
  const withAnalytics = (checks ?? []).filter((check) => ANALYTICS[check.checkType]);
  const ids = withAnalytics.map((check) => check.id).join(',');
  return usePoll(
    async (signal) => {
      const answers = await pool(withAnalytics, 3, (check) =>
        apiGet<AnalyticsAnswer>(
          credentials,
          `/v1/analytics/${ANALYTICS[check.checkType]!.path}/${check.id}`,
          { metrics: 'availability', quickRange: 'last24Hours' },
          signal,
        ).catch(() => undefined),
      );
      const availability = new Map<string, number | null>();
      withAnalytics.forEach((check, index) => {
        const value = answers[index]?.series[0]?.data[0]?.availability;
        availability.set(check.id, typeof value === 'number' ? value : null);
      });
      return availability;
    },
    () => Math.max(30_000, withAnalytics.length * 1000),
    [credentials, ids],
  );
}

/** Availability from the sessions read, for check types without analytics: each location's result counts. */
function availabilityFromSessions(sessions: CheckSession[], now: number): { value: number | null; partial: boolean } {
  const since = now - 86_400_000;
  let total = 0;
  let up = 0;
  for (const session of sessions) {
    if (new Date(session.startedAt).getTime() < since || IN_PROGRESS.has(session.status)) continue;
    for (const result of session.results) {
      if (result.isCancelled) continue;
      total += 1;
      if (!result.hasFailures && !result.hasErrors) up += 1;
    }
  }
  const oldest = sessions.at(-1);
  const partial = sessions.length >= SESSIONS_PER_CHECK && oldest !== undefined && new Date(oldest.startedAt).getTime() > since;
  return { value: total > 0 ? (100 * up) / total : null, partial };
}

export function sparkPoints(sessions: CheckSession[]) {
  return sessions
    .filter((session) => !IN_PROGRESS.has(session.status) && session.status !== 'CANCELLED')
    .slice(0, 30)
    .reverse()
    .map((session) => {
      const times = session.results.map((result) => result.responseTime).filter((value): value is number => typeof value === 'number');
      return {
        value: times.length > 0 ? times.reduce((sum, value) => sum + value, 0) / times.length : null,
        failed: sessionOutcome(session) === 'failing',
      };
    });
}

function sparkLabel(points: ReturnType<typeof sparkPoints>): string {
  const values = points.map((point) => point.value).filter((value): value is number => value !== null);
  if (values.length === 0) return 'No response times yet';
  const failed = points.filter((point) => point.failed).length;
  return `Response time of the last ${points.length} runs, oldest first: from ${ms(Math.min(...values))} to ${ms(Math.max(...values))}, latest ${ms(values.at(-1))}${failed > 0 ? `; ${failed} failed` : ''}`;
}

const STATUS_FILTERS: Outcome[] = ['passing', 'degraded', 'failing', 'none'];

export function ChecksPage({ route }: { route: Route }) {
  const credentials = useCredentials();
  const now = useNow(5000);
  const checks = usePoll((signal) => listAllChecks(credentials, signal), 30_000, [credentials]);
  const statuses = usePoll(
    async (signal) => new Map((await apiGet<CheckStatus[]>(credentials, '/v1/check-statuses', {}, signal)).map((status) => [status.checkId, status])),
    5000,
    [credentials],
  );
  const activity = useActivity(credentials, checks.data);
  const availability = useAvailability(credentials, checks.data);
  // A check's first run finished: read availability again now rather than up to a minute later (once per check,
  // so the calls stay within the analytics budget however often runs finish).
  const asked = useRef(new Set<string>());
  const { refresh: refreshAvailability } = availability;
  const unknown = (checks.data ?? [])
    .filter((check) => ANALYTICS[check.checkType] && statuses.data?.get(check.id)?.updated_at && availability.data?.get(check.id) == null)
    .map((check) => check.id)
    .filter((id) => !asked.current.has(id));
  useEffect(() => {
    if (unknown.length === 0) return;
    for (const id of unknown) asked.current.add(id);
    refreshAvailability();
  }, [unknown.join(','), refreshAvailability]);

  const tag = route.query.get('tag') ?? '';
  const type = route.query.get('type') ?? '';
  const status = route.query.get('status') ?? '';
  const search = route.query.get('q') ?? '';

  const all = checks.data ?? [];
  const tags = useMemo(() => [...new Set(all.flatMap((check) => check.tags))].sort(), [all]);
  const types = useMemo(() => [...new Set(all.map((check) => check.checkType))].sort(), [all]);

  const rows = all
    .map((check) => {
      const sessions = activity.data?.get(check.id)?.sessions ?? [];
      const outcome = statusOutcome(statuses.data?.get(check.id));
      return { check, sessions, outcome, status: statuses.data?.get(check.id), live: sessions.filter((session) => IN_PROGRESS.has(session.status)) };
    })
    .filter(({ check, outcome }) => (!tag || check.tags.includes(tag)) && (!type || check.checkType === type) && (!status || outcome === status))
    .filter(({ check }) => !search || check.name.toLowerCase().includes(search.toLowerCase()))
    .sort((a, b) => a.check.name.localeCompare(b.check.name));

  const live = all.flatMap((check) => (activity.data?.get(check.id)?.sessions ?? []).filter((session) => IN_PROGRESS.has(session.status)));
  const counts = new Map<Outcome, number>();
  for (const check of all) {
    const outcome = statusOutcome(statuses.data?.get(check.id));
    counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
  }

  return (
    <>
      <PageTitle title="Checks">Checks</PageTitle>
      <ErrorNote error={checks.error ?? statuses.error} what="the checks" />
      {checks.data ? (
        <p class="summary" aria-live="polite">
          {all.length} checks:{' '}
          {(['failing', 'degraded', 'passing', 'none'] as Outcome[])
            .filter((outcome) => counts.get(outcome))
            .map((outcome) => `${counts.get(outcome)} ${OUTCOME_LABEL[outcome].toLowerCase()}`)
            .join(', ')}
        </p>
      ) : null}

      <LiveSessions sessions={live} checks={all} now={now} />

      <form class="filters" role="search" aria-label="Filter checks" onSubmit={(event) => event.preventDefault()}>
        <div class="form-row">
          <label for="filter-q">Name</label>
          <input id="filter-q" type="search" value={search} onInput={(event) => replaceQuery(route, { q: event.currentTarget.value })} />
        </div>
        <div class="form-row">
          <label for="filter-tag">Tag</label>
          <select id="filter-tag" value={tag} onChange={(event) => replaceQuery(route, { tag: event.currentTarget.value })}>
            <option value="">Any tag</option>
            {tags.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </div>
        <div class="form-row">
          <label for="filter-type">Type</label>
          <select id="filter-type" value={type} onChange={(event) => replaceQuery(route, { type: event.currentTarget.value })}>
            <option value="">Any type</option>
            {types.map((name) => (
              <option key={name} value={name}>
                {TYPE_LABEL[name] ?? name}
              </option>
            ))}
          </select>
        </div>
        <div class="form-row">
          <label for="filter-status">Status</label>
          <select id="filter-status" value={status} onChange={(event) => replaceQuery(route, { status: event.currentTarget.value })}>
            <option value="">Any status</option>
            {STATUS_FILTERS.map((name) => (
              <option key={name} value={name}>
                {OUTCOME_LABEL[name]}
              </option>
            ))}
          </select>
        </div>
      </form>

      {!checks.data && !checks.error ? <Loading what="checks" /> : null}
      {checks.data && all.length === 0 ? (
        <p class="empty">No checks yet. Create one with the API (<code>POST /v1/checks/url</code>); it shows up here.</p>
      ) : null}
      {checks.data && all.length > 0 ? (
        <div class="table-wrap">
          <table class="checks responsive">
            <caption class="visually-hidden">
              Checks{rows.length !== all.length ? `, ${rows.length} of ${all.length} shown by the filters` : ''}
            </caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">Locations</th>
                <th scope="col">Status</th>
                <th scope="col">Last run</th>
                <th scope="col">
                  <abbr title="Share of runs in the last 24 hours that neither failed nor errored">24 h availability</abbr>
                </th>
                <th scope="col">Response time</th>
              </tr>
            </thead>
            <tbody>
              {rows.map(({ check, sessions, outcome, status: checkStatus, live: running }) => {
                const points = sparkPoints(sessions);
                const fromAnalytics = ANALYTICS[check.checkType] !== undefined;
                const fallback = fromAnalytics ? undefined : availabilityFromSessions(sessions, now);
                const available = fromAnalytics ? availability.data?.get(check.id) : fallback?.value;
                const lastRun = checkStatus?.updated_at ?? sessions.find((session) => !IN_PROGRESS.has(session.status))?.stoppedAt ?? null;
                return (
                  <tr key={check.id} data-check-id={check.id} data-outcome={outcome}>
                    <th scope="row" data-label="Name">
                      <a href={href(['checks', check.id])}>{check.name}</a>
                      {!check.activated ? <span class="tag muted">paused</span> : null}
                      {check.muted ? <span class="tag muted">muted</span> : null}
                      {check.tags.length > 0 ? (
                        <span class="tags">
                          {check.tags.map((name) => (
                            <span key={name} class="tag">
                              {name}
                            </span>
                          ))}
                        </span>
                      ) : null}
                    </th>
                    <td data-label="Type">{TYPE_LABEL[check.checkType] ?? check.checkType}</td>
                    <td data-label="Locations">{[...check.privateLocations, ...check.locations].join(', ') || '–'}</td>
                    <td data-label="Status">
                      <Badge outcome={outcome} />
                      {running.length > 0 ? (
                        <span class="running-note">
                          {' '}
                          <Badge outcome="running" label="Running now" />
                        </span>
                      ) : null}
                    </td>
                    <td data-label="Last run">
                      <TimeAgo iso={lastRun} />
                    </td>
                    <td data-label="24 h availability" title={fallback?.partial ? `From the last ${SESSIONS_PER_CHECK} runs` : undefined}>
                      {percent(available)}
                    </td>
                    <td data-label="Response time" class="spark-cell">
                      <Sparkline points={points} label={sparkLabel(points)} />
                      <span class="small">{ms(points.at(-1)?.value)}</span>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {rows.length === 0 ? <p class="empty">No check matches these filters.</p> : null}
        </div>
      ) : null}
    </>
  );
}

export function LiveSessions({ sessions, checks, now, title = 'Running now' }: { sessions: CheckSession[]; checks: Check[]; now: number; title?: string }) {
  const names = new Map(checks.map((check) => [check.id, check.name]));
  return (
    <section class="live" aria-labelledby="live-heading">
      <h2 id="live-heading">
        {title} <span class="muted small">(updates every few seconds)</span>
      </h2>
      <div aria-live="polite">
        {sessions.length === 0 ? (
          <p class="muted">No check session in progress.</p>
        ) : (
          <ul class="live-list">
            {sessions.map((session) => (
              <li key={session.checkSessionId} class="live-item">
                <a href={href(['checks', session.checkId])}>{names.get(session.checkId) ?? session.name}</a>{' '}
                <Badge outcome={sessionOutcome(session)} label={SESSION_LABEL[session.status] ?? session.status} />{' '}
                <span class="muted small">
                  for {elapsed(session.startedAt, now)} · {session.results.length} of {session.runLocations.length} locations reported
                  {session.results.length > 0
                    ? ` (${session.results.map((result) => `${result.runLocation}: ${OUTCOME_LABEL[resultOutcome(result)].toLowerCase()}`).join(', ')})`
                    : ''}
                </span>
              </li>
            ))}
          </ul>
        )}
      </div>
    </section>
  );
}
