import type { FailedResult } from './error-groups.js';
import type { Analysis, AnalysisInput, AnalysisProvider } from './provider.js';

interface Diagnosis {
  category: string;
  summary: string;
  likelyCause: string;
  suggestions: string[];
}

const PHASES = ['dns', 'tcp', 'tls', 'firstByte', 'download'] as const;
const PHASE_NAMES: Record<(typeof PHASES)[number], string> = {
  dns: 'resolving the name',
  tcp: 'opening the connection',
  tls: 'the TLS handshake',
  firstByte: 'waiting for the first byte of the response',
  download: 'downloading the response',
};

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? undefined : sorted[Math.floor(sorted.length / 2)];
};

/**
 * The phase that took most of the time, by median over the results that have
 * timings. None when no phase took any time: a connection refused at once
 * has a slowest phase of 0 ms, which says nothing.
 */
function slowestPhase(results: readonly FailedResult[]): { phase: (typeof PHASES)[number]; ms: number } | undefined {
  let slowest: { phase: (typeof PHASES)[number]; ms: number } | undefined;
  for (const phase of PHASES) {
    const ms = median(results.map((result) => result.timings?.[phase]).filter((value): value is number => typeof value === 'number'));
    if (ms !== undefined && ms > 0 && (!slowest || ms > slowest.ms)) slowest = { phase, ms };
  }
  return slowest;
}

function byError(input: AnalysisInput, results: readonly FailedResult[]): Diagnosis {
  const { code, message } = input.errorGroup;
  const text = message.toLowerCase();
  switch (code) {
    case 'DNS_FAILURE':
    case 'DNS_RESPONSE_INVALID':
      return {
        category: 'DNS',
        summary: 'The host name could not be resolved.',
        likelyCause: /enotfound|nxdomain|not found/.test(text)
          ? 'The name does not exist for the resolver the agent uses: a record was removed or mistyped, or the agent resolves against a DNS server that does not know internal names.'
          : 'The resolver did not answer usefully: it was unreachable from the agent, timed out, or answered with an error.',
        suggestions: [
          'Resolve the name from the agent host (dig or nslookup) with the same resolver.',
          'Check that the record exists and was not changed recently.',
          'For internal names, make sure the agent container uses the internal DNS servers.',
        ],
      };
    case 'CONNECTION_FAILED':
      if (/refused/.test(text)) {
        return {
          category: 'CONNECTION',
          summary: 'The host answered, but nothing accepted connections on the port.',
          likelyCause: 'The service is down or not listening on that port (stopped, crashed, or moved), or a firewall actively rejects the connection.',
          suggestions: ['Check that the service runs and listens on the port.', 'Check recent deployments and firewall changes on the target.'],
        };
      }
      return {
        category: 'CONNECTION',
        summary: 'No connection could be made to the host.',
        likelyCause: /timed? ?out|etimedout|ehostunreach|enetunreach/.test(text)
          ? 'Packets to the host go unanswered: a firewall drops them, the route from the agent\'s network is gone, or the host is down.'
          : 'The connection failed before any response arrived.',
        suggestions: ['Test the connection from the agent host (nc or curl).', 'Check firewall rules and routes between the agent\'s network and the target.'],
      };
    case 'TLS_FAILURE':
      return {
        category: 'TLS',
        summary: 'The TLS handshake failed.',
        likelyCause: /expired/.test(text)
          ? 'The server\'s certificate has expired.'
          : /self[- ]signed|unable to verify|issuer/.test(text)
            ? 'The certificate is not signed by an authority the agent trusts (self-signed or a private CA).'
            : /altname|hostname|does not match/.test(text)
              ? 'The certificate does not name the host the check calls.'
              : 'The server and the agent could not agree on a secure connection.',
        suggestions: [
          'Inspect the certificate the server presents (openssl s_client -connect host:443 -servername host).',
          'For a private CA, give the agent its certificate with NODE_EXTRA_CA_CERTS; to check the rest regardless, use skipSSL.',
        ],
      };
    case 'TIMEOUT':
    case 'SCRIPT_TIMEOUT': {
      const slowest = slowestPhase(results);
      return {
        category: 'TIMEOUT',
        summary: 'The check ran out of time.',
        likelyCause: slowest
          ? `Most of the time went into ${PHASE_NAMES[slowest.phase]} (median ${Math.round(slowest.ms)} ms).`
          : 'The target did not complete within the check\'s time limit.',
        suggestions: slowest?.phase === 'firstByte'
          ? ['The server is slow to answer: look at its load, its database and its own dependencies.']
          : ['Look at the network path and the target\'s load at the times of failure.', 'If the target is slow by design, raise the check\'s limits.'],
      };
    }
    case 'SCRIPT_ERROR':
      return {
        category: 'SCRIPT',
        summary: 'The check\'s script failed.',
        likelyCause: `The script stopped with: ${message.split('\n')[0]}. When the page or API changed (a selector, a field, a flow), the script no longer matches it.`,
        suggestions: ['Run the script locally against the target.', 'Compare the page or API with the last time the check passed.'],
      };
    case 'SCRIPT_MEMORY_LIMIT':
      return {
        category: 'RESOURCES',
        summary: 'The script ran out of memory.',
        likelyCause: 'The run needed more memory than the sandbox allows: a heavy page, a leak in the script, or many browser contexts.',
        suggestions: ['Close pages and contexts the script no longer needs.', 'Raise SANDBOX_MEMORY_MB on the agent if the page really needs it.'],
      };
    case 'ICMP_NOT_PERMITTED':
    case 'PING_UNAVAILABLE':
      return {
        category: 'AGENT',
        summary: 'The agent could not send ICMP packets.',
        likelyCause: 'The agent container lacks the NET_RAW capability or the ping program.',
        suggestions: ['Run the agent with NET_RAW (securityContext.capabilities.add: [NET_RAW]).'],
      };
    case 'PING_FAILED':
      return {
        category: 'NETWORK',
        summary: 'Pings were lost.',
        likelyCause: 'The host does not answer ICMP (down, or ICMP is filtered on the way).',
        suggestions: ['Check the host and any firewall that may drop ICMP.'],
      };
    case 'ASSERTION_FAILED':
      return byAssertion(results);
    default:
      return {
        category: 'OTHER',
        summary: `The check failed with ${code}.`,
        likelyCause: message,
        suggestions: ['Look at the latest failed result\'s details and logs.'],
      };
  }
}

function byAssertion(results: readonly FailedResult[]): Diagnosis {
  const assertion = results.find((result) => result.failedAssertions.length > 0)?.failedAssertions[0];
  const statuses = [...new Set(results.map((result) => result.statusCode).filter((code): code is number => code !== null))];
  if (assertion?.source === 'STATUS_CODE' && statuses.length > 0) {
    const server = statuses.some((code) => code >= 500);
    return {
      category: server ? 'SERVER_ERROR' : 'HTTP_STATUS',
      summary: `The response status was ${statuses.join(', ')} where the check expects ${assertion.comparison} ${assertion.target}.`,
      likelyCause: server
        ? 'The server failed to handle the request: an error in the application, or a dependency behind it (database, upstream API) failing.'
        : statuses.some((code) => code === 401 || code === 403)
          ? 'The request is refused: credentials expired or were rotated, or access rules changed.'
          : statuses.some((code) => code === 404)
            ? 'The address no longer exists: a route was renamed or removed.'
            : 'The server answers differently from what the check expects.',
      suggestions: server
        ? ['Look at the server\'s error logs at the times of failure.', 'Check recent deployments of the target.']
        : ['Call the URL by hand with the check\'s method and headers, and compare.'],
    };
  }
  return {
    category: 'ASSERTION',
    summary: assertion
      ? `The assertion ${assertion.source}${assertion.property ? `.${assertion.property}` : ''} ${assertion.comparison} ${assertion.target} failed (got ${String(assertion.actual)}).`
      : 'An assertion failed.',
    likelyCause: 'The target answers, but not with what the check expects: the response changed, or the expectation is out of date.',
    suggestions: ['Compare the actual values with the assertion; update one or the other.'],
  };
}

/**
 * The built-in analyser: rules over the error group's code and message, the
 * results' timings, status codes and assertions, where it fails and since
 * when. No model, no network: it runs inside the service.
 */
export class BuiltinAnalyser implements AnalysisProvider {
  readonly provider = 'outpost-builtin';
  readonly model = 'outpost-rules-1';

  async analyse(input: AnalysisInput): Promise<Analysis> {
    const { errorGroup: group, results } = input;
    const diagnosis = byError(input, results);
    const evidence = [
      `${group.count} failed result${group.count === 1 ? '' : 's'} with this error between ${group.firstSeen} and ${group.lastSeen}.`,
      `Error: ${group.code}: ${group.message.split('\n')[0]}`,
    ];
    const locations = [...new Set(results.map((result) => result.runLocation))];
    evidence.push(
      group.locations.length > 1
        ? `It fails at ${group.locations.length} locations (${group.locations.join(', ')}): the target itself, more likely than one network path.`
        : `It fails at one location (${group.locations[0] ?? locations[0] ?? 'unknown'}): if the check runs elsewhere too, look at the path from there.`,
    );
    if (input.lastPassedAt) evidence.push(`The check last passed at ${input.lastPassedAt}, before this error first appeared.`);
    const slowest = slowestPhase(results);
    if (slowest && diagnosis.category !== 'TIMEOUT') {
      evidence.push(`Slowest phase: ${PHASE_NAMES[slowest.phase]}, median ${Math.round(slowest.ms)} ms.`);
    }
    const statuses = [...new Set(results.map((result) => result.statusCode).filter((code) => code !== null))];
    if (statuses.length > 0) evidence.push(`Response status${statuses.length > 1 ? 'es' : ''}: ${statuses.join(', ')}.`);
    const lastLog = results.find((result) => result.logTail.length > 0)?.logTail.at(-1);
    if (lastLog) evidence.push(`Last log line of the latest failure: ${lastLog}`);
    return {
      summary: diagnosis.summary,
      category: diagnosis.category,
      likelyCause: diagnosis.likelyCause,
      evidence,
      suggestions: diagnosis.suggestions,
    };
  }
}
