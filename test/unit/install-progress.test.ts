import { describe, expect, it } from 'vitest';
import { installProgress } from '../../src/runtimes/install-progress.js';

function stream(isTTY: boolean, columns?: number) {
  const writes: string[] = [];
  return { writes, isTTY, columns, write: (text: string) => writes.push(text) };
}

describe('install progress', () => {
  it('writes plain start and end lines when the output is not a terminal', () => {
    const out = stream(false);
    const progress = installProgress(out, ['2026.04', '2025.04']);
    progress.working('2026.04', 'installing');
    progress.working('2026.04', 'installing');
    progress.working('2025.04', 'installing');
    progress.finished('2025.04', false, 'failed');
    progress.finished('2026.04', true, 'installed in 3.0 s');
    progress.close();
    expect(out.writes.join('')).toBe(
      'runtime 2026.04: installing\n' +
        'runtime 2025.04: installing\n' +
        'runtime 2025.04: failed\n' +
        'runtime 2026.04: installed in 3.0 s\n',
    );
  });

  it('keeps one line per runtime on a terminal, redrawn in place with a spinner and the time so far', () => {
    const out = stream(true);
    const progress = installProgress(out, ['2026.04', '2024.09']);
    progress.working('2026.04', 'installing');
    progress.finished('2024.09', true, 'already installed');
    progress.finished('2026.04', true, 'installed in 9.9 s');
    progress.close();
    const [first, second, ...rest] = out.writes;
    // First drawing: both lines, no cursor movement yet.
    expect(first).toBe('\r\x1b[2K⠋ 2026.04  waiting\n\r\x1b[2K⠋ 2024.09  waiting\n');
    // Later drawings go back up two lines and rewrite both.
    const [up, ...redrawn] = second!.split('\r\x1b[2K');
    expect(up).toBe('\x1b[2A');
    expect(redrawn[0]).toMatch(/^⠋ 2026\.04 {2}installing \(0\.\d s\)\n$/);
    expect(redrawn[1]).toBe('⠋ 2024.09  waiting\n');
    expect(rest.at(-1)).toBe('\x1b[2A\r\x1b[2K✔ 2026.04  installed in 9.9 s\n\r\x1b[2K✔ 2024.09  already installed\n');
  });

  it('cuts lines to the width of the terminal, so a wrapped line cannot break the redrawing', () => {
    const out = stream(true, 20);
    const progress = installProgress(out, ['2026.04']);
    progress.finished('2026.04', false, 'failed with a very long explanation');
    progress.close();
    expect(out.writes.at(-1)).toBe('\x1b[1A\r\x1b[2K✖ 2026.04  failed w\n');
  });

  it('shows nothing without a stream', () => {
    const progress = installProgress(undefined, ['2026.04']);
    progress.working('2026.04', 'installing');
    progress.finished('2026.04', true, 'done');
    progress.close();
  });
});
