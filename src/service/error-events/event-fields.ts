/**
 * The fields of an agent's error event the service keeps: those the agent is
 * allowed to send. Whatever else an event carries (an older agent, another
 * SDK pointed here) is not stored.
 */
export interface StoredFrame {
  filename?: string;
  function?: string;
  lineno?: number;
  colno?: number;
}

export interface StoredException {
  type: string | null;
  value: string | null;
  frames: StoredFrame[];
}

export interface ErrorEventFields {
  eventId: string;
  occurredAt: Date;
  release: string | null;
  platform: string | null;
  runtime: string | null;
  message: string | null;
  exceptions: StoredException[];
}

const MAX_TEXT = 8192;
const MAX_FRAMES = 100;
const MAX_EXCEPTIONS = 10;

export function eventFields(payload: unknown, now: Date): ErrorEventFields | undefined {
  if (!isObject(payload) || typeof payload.event_id !== 'string' || !/^[0-9a-f]{32}$/.test(payload.event_id)) return undefined;
  const contexts = isObject(payload.contexts) ? payload.contexts : {};
  const os = isObject(contexts.os) ? contexts.os : {};
  const device = isObject(contexts.device) ? contexts.device : {};
  const runtime = isObject(contexts.runtime) ? contexts.runtime : {};
  const timestamp = typeof payload.timestamp === 'number' ? new Date(payload.timestamp * 1000) : now;
  const values = isObject(payload.exception) && Array.isArray(payload.exception.values) ? payload.exception.values : [];
  return {
    eventId: payload.event_id,
    occurredAt: Number.isNaN(timestamp.getTime()) || timestamp > now ? now : timestamp,
    release: text(payload.release),
    platform: [text(os.name), text(device.arch)].filter(Boolean).join('/') || null,
    runtime: [text(runtime.name), text(runtime.version)].filter(Boolean).join(' ') || null,
    message: text(payload.message),
    exceptions: values.slice(0, MAX_EXCEPTIONS).filter(isObject).map((value) => ({
      type: text(value.type),
      value: text(value.value),
      frames: (isObject(value.stacktrace) && Array.isArray(value.stacktrace.frames) ? value.stacktrace.frames : [])
        .slice(-MAX_FRAMES)
        .filter(isObject)
        .map(frame),
    })),
  };
}

function frame(raw: Record<string, unknown>): StoredFrame {
  const stored: StoredFrame = {};
  const filename = text(raw.filename);
  const name = text(raw.function);
  if (filename) stored.filename = filename;
  if (name) stored.function = name;
  if (Number.isInteger(raw.lineno)) stored.lineno = raw.lineno as number;
  if (Number.isInteger(raw.colno)) stored.colno = raw.colno as number;
  return stored;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 ? value.slice(0, MAX_TEXT) : null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
