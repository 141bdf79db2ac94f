/**
 * What an error event may carry when it leaves the agent: the error's message
 * and type, its stack frames (file, function, line), the agent's version, the
 * platform and the Node.js runtime. Everything else the SDK gathered (host
 * name, environment, breadcrumbs, request data, tags, extra data, user) is
 * dropped by building a new event from these fields alone, so a field a
 * future SDK adds cannot slip through.
 */
import { relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ErrorEvent, Exception, StackFrame } from '@sentry/core';
import { INSTALL_ROOT } from '../../install-root.js';

// Addresses the agent talks to or probes are the customer's network layout.
const URLS = /\b[a-z][a-z0-9+.-]*:\/\/[^\s'"<>()]+/gi;
const IPV4 = /\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b/g;
const IPV6 = /\[[0-9a-f:.]*:[0-9a-f:.]*\](?::\d+)?/gi;

export interface AllowlistOptions {
  /** The agent's version, sent as the release. */
  release: string;
  /** Removes secret values (the agent's key, SERVICE_SECRET_* values) from a text. */
  scrubSecrets(text: string): string;
}

export function allowlistEvent(event: ErrorEvent, options: AllowlistOptions): ErrorEvent {
  const clean = (text: string) => maskAddresses(options.scrubSecrets(text));
  const exceptions = (event.exception?.values ?? []).map((exception) => allowedException(exception, clean));
  const allowed: ErrorEvent = {
    type: undefined,
    event_id: event.event_id,
    timestamp: event.timestamp,
    level: 'error',
    platform: 'node',
    release: options.release,
    contexts: {
      os: { name: process.platform },
      device: { arch: process.arch },
      runtime: { name: 'node', version: process.version },
    },
  };
  if (event.message) allowed.message = clean(event.message);
  if (exceptions.length > 0) allowed.exception = { values: exceptions };
  return allowed;
}

export function maskAddresses(text: string): string {
  return text.replace(URLS, '<url>').replace(IPV6, '<address>').replace(IPV4, '<address>');
}

function allowedException(exception: Exception, clean: (text: string) => string): Exception {
  const allowed: Exception = {};
  if (exception.type) allowed.type = exception.type;
  if (exception.value) allowed.value = clean(exception.value);
  const frames = exception.stacktrace?.frames;
  if (frames) allowed.stacktrace = { frames: frames.map(allowedFrame) };
  return allowed;
}

function allowedFrame(frame: StackFrame): StackFrame {
  const allowed: StackFrame = {};
  if (frame.filename) allowed.filename = agentRelative(frame.filename);
  if (frame.function) allowed.function = frame.function;
  if (frame.lineno !== undefined) allowed.lineno = frame.lineno;
  if (frame.colno !== undefined) allowed.colno = frame.colno;
  if (frame.in_app !== undefined) allowed.in_app = frame.in_app;
  return allowed;
}

/**
 * A file of the agent or its packages, relative to where the agent is
 * installed; Node's own modules as they are; anything else by its name alone,
 * as its directory may name a person or a customer's layout.
 */
function agentRelative(filename: string): string {
  if (filename.startsWith('node:')) return filename;
  const path = filename.startsWith('file://') ? fileURLToPath(filename) : filename;
  const inside = relative(INSTALL_ROOT, path);
  if (!inside.startsWith('..') && !inside.startsWith(sep)) return inside.split(sep).join('/');
  return path.split(/[\\/]/).pop() ?? '<file>';
}
