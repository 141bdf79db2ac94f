/**
 * Credentials in HTTP headers are not always among a job's secrets: a session
 * cookie the site set, a token a login step was given. On runtimes that ask
 * for it, the values of these headers are replaced in trace files wherever
 * they appear in the shapes Playwright writes headers in: arrays of
 * {name, value} (resource snapshots' request and response, API calls' params)
 * and plain objects under `headers` or `extraHTTPHeaders` (what a script
 * passed to `request.get(url, { headers })`, recorded as the call's params),
 * the `cookies` lists of network entries (parsed from those headers), and the
 * `name: value` lines of an API call's log.
 */
const LOGGED_HEADER = /^(\s*)(authorization|proxy-authorization|cookie|set-cookie|x-api-key|x-auth-token):\s.*$/i;
const HEADER_OBJECT_KEYS: ReadonlySet<string> = new Set(['headers', 'extraHTTPHeaders']);

const SENSITIVE_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'x-auth-token',
]);

/** A line that cannot name one of the headers is passed on without being parsed. */
const MAY_NAME_SENSITIVE_HEADER = /authorization|cookie|x-api-key|x-auth-token/i;

export function isSensitiveHeader(name: string): boolean {
  return SENSITIVE_HEADERS.has(name.toLowerCase());
}

/** Whether `text` may hold a sensitive header; checking is far cheaper than parsing. */
export function mayNameSensitiveHeader(text: string): boolean {
  return MAY_NAME_SENSITIVE_HEADER.test(text);
}

/** Replaces, in place, the value of every sensitive header in a parsed JSON value; true when one was. */
export function scrubHeaderValues(root: unknown, replacement: string): boolean {
  let changed = false;
  // A stack of its own rather than recursion: a line's nesting is the script's to choose.
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value !== 'object' || value === null) continue;
    const isArray = Array.isArray(value);
    if (!isArray) {
      const record = value as Record<string, unknown>;
      for (const [key, headers] of Object.entries(record)) {
        if (HEADER_OBJECT_KEYS.has(key) && isPlainObject(headers)) changed = scrubHeaderObject(headers, replacement) || changed;
        if (key === 'cookies' && Array.isArray(headers)) changed = scrubCookies(headers, replacement) || changed;
      }
      if (record.type === 'log' && typeof record.message === 'string') {
        const match = LOGGED_HEADER.exec(record.message);
        const scrubbed = match ? `${match[1]}${match[2]}: ${replacement}` : record.message;
        if (scrubbed !== record.message) {
          record.message = scrubbed;
          changed = true;
        }
      }
    }
    for (const item of isArray ? (value as unknown[]) : Object.values(value)) {
      if (isArray && isHeader(item) && isSensitiveHeader(item.name) && item.value !== replacement) {
        item.value = replacement;
        changed = true;
      }
      pending.push(item);
    }
  }
  return changed;
}

/** One NDJSON line with its sensitive header values replaced; the line itself when it has none or is not JSON. */
export function scrubHeadersInLine(line: string, replacement: string): string {
  if (!mayNameSensitiveHeader(line)) return line;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    // Not JSON (a truncated last line, another format): the secret scrub still runs over it.
    return line;
  }
  return scrubHeaderValues(parsed, replacement) ? JSON.stringify(parsed) : line;
}

function isHeader(item: unknown): item is { name: string; value: unknown } {
  if (typeof item !== 'object' || item === null) return false;
  return typeof (item as { name?: unknown }).name === 'string' && 'value' in item;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function scrubHeaderObject(headers: Record<string, unknown>, replacement: string): boolean {
  let changed = false;
  for (const [name, value] of Object.entries(headers)) {
    if (isSensitiveHeader(name) && typeof value === 'string' && value !== replacement) {
      headers[name] = replacement;
      changed = true;
    }
  }
  return changed;
}

function scrubCookies(cookies: unknown[], replacement: string): boolean {
  let changed = false;
  for (const cookie of cookies) {
    if (isHeader(cookie) && cookie.value !== replacement) {
      cookie.value = replacement;
      changed = true;
    }
  }
  return changed;
}
