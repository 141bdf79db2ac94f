import { apiGet, sameOrigin, type Artifact, type CheckResult } from '../api';
import { useCredentials } from '../app';
import { absolute, bytes, ms, OUTCOME_LABEL, resultOutcome, TYPE_LABEL } from '../format';
import { usePoll } from '../hooks';
import { href } from '../router';
import { Badge, ErrorNote, Field, Loading, PageTitle } from '../ui';

/** The phases in the order they happen; `wait` is the time in none of them, last. */
const TIMING_LABELS: Record<string, string> = {
  dns: 'DNS lookup',
  tcp: 'TCP connect',
  tls: 'TLS handshake',
  firstByte: 'First byte',
  download: 'Download',
  wait: 'Other (wait)',
};
const TIMING_ORDER = Object.keys(TIMING_LABELS);
const timingRank = (name: string) => (TIMING_ORDER.includes(name) ? TIMING_ORDER.indexOf(name) : TIMING_ORDER.length);

export function ResultPage({ checkId, resultId }: { checkId: string; resultId: string }) {
  const credentials = useCredentials();
  // Artifact links are signed for a while: read again now and then so they stay valid.
  const result = usePoll((signal) => apiGet<CheckResult>(credentials, `/v1/check-results/${checkId}/${resultId}`, {}, signal), 240_000, [
    credentials,
    checkId,
    resultId,
  ]);
  if (result.error && !result.data) return <ErrorNote error={result.error} what="this result" />;
  if (!result.data) return <Loading what="the result" />;
  const data = result.data;
  const outcome = resultOutcome(data);
  const steps = Array.isArray(data.details.steps) ? (data.details.steps as { name: string; durationMs: number; status: string; error?: string }[]) : [];
  const tests = Array.isArray(data.details.tests)
    ? (data.details.tests as { title: string; project: string; file: string; status: string; durationMs: number; error?: string }[])
    : [];
  const otherDetails = Object.fromEntries(Object.entries(data.details).filter(([name]) => name !== 'steps' && name !== 'tests'));
  const title = `${data.name} at ${data.runLocation}`;

  return (
    <>
      <nav aria-label="Breadcrumb" class="breadcrumb">
        <a href={href([])}>Checks</a> <span aria-hidden="true">›</span> <a href={href(['checks', checkId])}>{data.name}</a>{' '}
        <span aria-hidden="true">›</span> <span aria-current="page">Result</span>
      </nav>
      <div class="title-row">
        <PageTitle title={`Result of ${data.name}`}>{title}</PageTitle>
        <Badge outcome={outcome} label={data.isCancelled ? 'Cancelled' : OUTCOME_LABEL[outcome]} />
      </div>
      <dl class="facts">
        <Field label="Type">{TYPE_LABEL[data.checkType] ?? data.checkType}</Field>
        <Field label="Started">{absolute(data.startedAt)}</Field>
        <Field label="Response time">{ms(data.responseTime)}</Field>
        {data.statusCode !== null ? <Field label="Status code">{data.statusCode}</Field> : null}
        <Field label="Attempt">{data.attempts}</Field>
        <Field label="Session">
          <code class="small">{data.checkSessionId.slice(0, 8)}</code>
        </Field>
      </dl>

      {data.error ? (
        <section aria-labelledby="error-heading" class="panel panel-error">
          <h2 id="error-heading">Error</h2>
          <p>
            <code>{data.error.code}</code>
          </p>
          <pre class="wrap">{data.error.message}</pre>
        </section>
      ) : null}

      {data.timings && Object.values(data.timings).some((value) => value !== null) ? <Timings timings={data.timings} /> : null}

      {data.assertions.length > 0 ? (
        <section aria-labelledby="assertions-heading">
          <h2 id="assertions-heading">Assertions</h2>
          <div class="table-wrap">
            <table class="responsive">
              <thead>
                <tr>
                  <th scope="col">Outcome</th>
                  <th scope="col">Source</th>
                  <th scope="col">Property</th>
                  <th scope="col">Comparison</th>
                  <th scope="col">Target</th>
                  <th scope="col">Actual</th>
                </tr>
              </thead>
              <tbody>
                {data.assertions.map((assertion, index) => (
                  <tr key={index}>
                    <td data-label="Outcome">
                      <Badge outcome={assertion.passed ? 'passing' : 'failing'} label={assertion.passed ? 'Passed' : 'Failed'} />
                    </td>
                    <td data-label="Source">{assertion.source}</td>
                    <td data-label="Property">{assertion.property || '–'}</td>
                    <td data-label="Comparison">{assertion.comparison}</td>
                    <td data-label="Target">
                      <code>{assertion.target}</code>
                    </td>
                    <td data-label="Actual">
                      <code>{assertion.actual === null ? 'null' : String(assertion.actual)}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      ) : null}

      {steps.length > 0 ? (
        <section aria-labelledby="steps-heading">
          <h2 id="steps-heading">Steps</h2>
          <ol class="steps">
            {steps.map((step, index) => (
              <li key={index} class={`step step-${step.status}`}>
                <Badge outcome={step.status === 'passed' ? 'passing' : step.status === 'failed' ? 'failing' : 'none'} label={step.status} />{' '}
                <span class="step-name">{step.name}</span> <span class="muted small">{ms(step.durationMs)}</span>
                {step.error ? <pre class="wrap small">{step.error}</pre> : null}
              </li>
            ))}
          </ol>
        </section>
      ) : null}

      {tests.length > 0 ? (
        <section aria-labelledby="tests-heading">
          <h2 id="tests-heading">Tests</h2>
          <div class="table-wrap">
            <table class="responsive">
              <thead>
                <tr>
                  <th scope="col">Test</th>
                  <th scope="col">Project</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Duration</th>
                </tr>
              </thead>
              <tbody>
                {tests.map((test, index) => (
                  <tr key={index}>
                    <td data-label="Test">
                      {test.title} <span class="muted small">{test.file}</span>
                      {test.error ? <pre class="wrap small">{test.error}</pre> : null}
                    </td>
                    <td data-label="Project">{test.project || '–'}</td>
                    <td data-label="Outcome">
                      <Badge
                        outcome={test.status === 'passed' ? 'passing' : test.status === 'flaky' ? 'degraded' : test.status === 'skipped' ? 'none' : 'failing'}
                        label={test.status}
                      />
                    </td>
                    <td data-label="Duration">{ms(test.durationMs)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      ) : null}

      {data.artifacts.length > 0 ? <Artifacts artifacts={data.artifacts} /> : null}

      <section aria-labelledby="logs-heading">
        <h2 id="logs-heading">Logs</h2>
        {data.logs.length === 0 ? (
          <p class="muted">No log lines.</p>
        ) : (
          <div class="logs" tabIndex={0} role="region" aria-label="Log lines">
            {data.logs.map((line, index) => (
              <div key={index} class={`log-line log-${line.level.toLowerCase()}`}>
                <span class="log-time">{line.time.slice(11, 23)}</span> <span class="log-level">{line.level}</span>{' '}
                <span class="log-message">{line.message}</span>
              </div>
            ))}
          </div>
        )}
      </section>

      {Object.keys(otherDetails).length > 0 ? (
        <section aria-labelledby="details-heading">
          <h2 id="details-heading">Details</h2>
          <details>
            <summary>What the {TYPE_LABEL[data.checkType] ?? data.checkType} check measured (JSON)</summary>
            <pre class="wrap small">{JSON.stringify(otherDetails, null, 2)}</pre>
          </details>
        </section>
      ) : null}
    </>
  );
}

function Timings({ timings }: { timings: Record<string, number | null> }) {
  const phases = (Object.entries(timings).filter(([name, value]) => name !== 'total' && value !== null) as [string, number][]).sort(
    ([a], [b]) => timingRank(a) - timingRank(b),
  );
  const total = timings.total ?? phases.reduce((sum, [, value]) => sum + value, 0);
  let offset = 0;
  return (
    <section aria-labelledby="timings-heading">
      <h2 id="timings-heading">Timings</h2>
      <table class="timings">
        <caption class="visually-hidden">Phases of the run, in order, with their duration</caption>
        <tbody>
          {phases.map(([name, value]) => {
            const left = total > 0 ? (offset / total) * 100 : 0;
            const width = total > 0 ? Math.max(0.5, (value / total) * 100) : 0;
            offset += value;
            return (
              <tr key={name}>
                <th scope="row">{TIMING_LABELS[name] ?? name}</th>
                <td class="timing-value">{ms(value)}</td>
                <td class="timing-bar-cell" aria-hidden="true">
                  <span class="timing-bar" style={{ marginLeft: `${left}%`, width: `${width}%` }} />
                </td>
              </tr>
            );
          })}
          <tr class="timing-total">
            <th scope="row">Total</th>
            <td class="timing-value">{ms(total)}</td>
            <td aria-hidden="true" />
          </tr>
        </tbody>
      </table>
    </section>
  );
}

const isTrace = (artifact: Artifact) => /trace[^/]*\.zip$/i.test(artifact.name);

function Artifacts({ artifacts }: { artifacts: Artifact[] }) {
  return (
    <section aria-labelledby="artifacts-heading">
      <h2 id="artifacts-heading">Artifacts</h2>
      <ul class="artifacts">
        {artifacts.map((artifact) => {
          const link = artifact.link ? sameOrigin(artifact.link) : undefined;
          const absoluteLink = link ? new URL(link, location.origin).toString() : undefined;
          return (
            <li key={artifact.name} class="artifact">
              <div class="artifact-head">
                <strong>{artifact.name}</strong> <span class="muted small">{artifact.contentType} · {bytes(artifact.size)}</span>
              </div>
              {!link ? (
                <p class="error-note">Not uploaded{artifact.error ? `: ${artifact.error}` : ''}.</p>
              ) : artifact.contentType.startsWith('image/') ? (
                <a href={link} target="_blank" rel="noopener noreferrer">
                  <img src={link} alt={`Screenshot ${artifact.name}`} class="screenshot" loading="lazy" />
                </a>
              ) : artifact.contentType.startsWith('video/') ? (
                <video src={link} controls preload="metadata" class="video" aria-label={`Video ${artifact.name}`} />
              ) : null}
              {link ? (
                <p class="artifact-links">
                  {isTrace(artifact) && absoluteLink ? (
                    <>
                      <a
                        class="button"
                        href={`https://trace.playwright.dev/?trace=${encodeURIComponent(absoluteLink)}`}
                        target="_blank"
                        rel="noopener noreferrer"
                      >
                        Open trace in Trace Viewer<span class="visually-hidden"> (trace.playwright.dev, new tab)</span>
                      </a>{' '}
                    </>
                  ) : null}
                  <a class="button secondary" href={link} download={artifact.name}>
                    Download {artifact.name}
                  </a>
                </p>
              ) : null}
              {isTrace(artifact) && link ? (
                <p class="small muted">
                  Or locally: <code>npx playwright show-trace '{absoluteLink}'</code>. The link is signed and expires; this page renews it.
                </p>
              ) : null}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
