import type { RuntimeRecord } from './catalog.js';

/** `outpost runtimes list`: one row per runtime record, columns padded to their widest cell. */
export function runtimeTable(runtimes: readonly RuntimeRecord[], installed: ReadonlySet<string>): string {
  const rows = [
    ['id', 'stage', 'Node.js', 'multi-step', 'installed'],
    ...runtimes.map((runtime) => [
      runtime.name,
      runtime.stage,
      runtime.nodeJsVersion,
      runtime.multiStepSupport ? 'yes' : 'no',
      installed.has(runtime.name) ? 'yes' : 'no',
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()).join('\n');
}
