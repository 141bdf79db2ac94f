/**
 * What an install shows while it runs: on a terminal, one line per runtime,
 * redrawn in place with a spinner and the time so far; anywhere else (CI logs,
 * pipes), plain lines as things start and end, because redrawn lines turn into
 * noise in a log file.
 */

/** The part of a stream the display needs; process.stdout fits. */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface InstallProgress {
  /** The runtime's line now says `text`, with a spinner and the time since it started. */
  working(id: string, text: string): void;
  /** The runtime's line is final. */
  finished(id: string, ok: boolean, text: string): void;
  /** Stops redrawing; every line is left as it last was. */
  close(): void;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const REDRAW_MS = 100;

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** A display for these runtime ids; nothing is shown without a stream. */
export function installProgress(stream: ProgressStream | undefined, ids: readonly string[]): InstallProgress {
  if (!stream) return { working: () => undefined, finished: () => undefined, close: () => undefined };
  return stream.isTTY ? terminalProgress(stream, ids) : plainProgress(stream);
}

function plainProgress(stream: ProgressStream): InstallProgress {
  const said = new Map<string, string>();
  return {
    working(id, text) {
      // The same state twice (e.g. one message per npm retry) is one line in a log.
      if (said.get(id) === text) return;
      said.set(id, text);
      stream.write(`runtime ${id}: ${text}\n`);
    },
    finished(id, _ok, text) {
      stream.write(`runtime ${id}: ${text}\n`);
    },
    close: () => undefined,
  };
}

interface Line {
  text: string;
  /** When work on the runtime began; the time shown counts from here. */
  started?: number;
  /** Undefined until finished. */
  ok?: boolean;
}

function terminalProgress(stream: ProgressStream, ids: readonly string[]): InstallProgress {
  const width = Math.max(...ids.map((id) => id.length));
  const lines = new Map<string, Line>(ids.map((id) => [id, { text: 'waiting' }]));
  let frame = 0;
  let drawn = false;

  const render = (line: Line, id: string): string => {
    const label = id.padEnd(width);
    if (line.ok === true) return `✔ ${label}  ${line.text}`;
    if (line.ok === false) return `✖ ${label}  ${line.text}`;
    const elapsed = line.started === undefined ? '' : ` (${seconds(Date.now() - line.started)})`;
    return `${SPINNER[frame % SPINNER.length]} ${label}  ${line.text}${elapsed}`;
  };
  const draw = () => {
    // Back to the first line, then rewrite every line whole.
    let out = drawn ? `\x1b[${lines.size}A` : '';
    // A line that wrapped would throw the cursor arithmetic off: cut it to the terminal's width.
    const fit = (text: string) => (stream.columns && text.length >= stream.columns ? text.slice(0, stream.columns - 1) : text);
    for (const [id, line] of lines) out += `\r\x1b[2K${fit(render(line, id))}\n`;
    stream.write(out);
    drawn = true;
  };
  const timer = setInterval(() => {
    frame += 1;
    draw();
  }, REDRAW_MS);
  // The display never keeps a process alive by itself.
  timer.unref();
  draw();

  return {
    working(id, text) {
      const line = lines.get(id);
      if (!line) return;
      line.started ??= Date.now();
      line.text = text;
      draw();
    },
    finished(id, ok, text) {
      const line = lines.get(id);
      if (!line) return;
      Object.assign(line, { text, ok });
      draw();
    },
    close() {
      clearInterval(timer);
      draw();
    },
  };
}
