/**
 * What npm said when a command of the suite failed. npm prints its reason as
 * `npm error …` lines (`npm ERR! …` before npm 10), followed by usage help
 * and the path of its debug log; the last lines of its output are therefore
 * rarely the reason. The agent keeps npm's logs in the job's directory
 * (`npm_config_logs_dir`) and uploads the run's debug log with the result.
 */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';

/** Where npm writes its logs for a suite: under the job's directory, never in a cache shared between runs. */
export const NPM_LOGS_DIRECTORY = 'npm-logs';
export const NPM_DEBUG_LOG_ARTIFACT = 'npm-debug.log';

const MAX_REASON_CHARS = 1500;
const NPM_ERROR_LINE = /^npm (?:error|ERR!)(?:\s(.*))?$/;
/** Where npm's reason ends and its help or bookkeeping begins. */
const AFTER_REASON = /^(Usage:|A complete log of this run can be found in|Log files were not written)/;

/**
 * npm's own error lines, prefix removed, as one text: its reason first, its
 * error code after; undefined when the output has none.
 */
export function npmErrorText(output: string): string | undefined {
  const paragraphs: string[][] = [[]];
  let code: string | undefined;
  for (const raw of stripVTControlCharacters(output).split('\n')) {
    const match = NPM_ERROR_LINE.exec(raw.trimEnd());
    if (!match) continue;
    const text = (match[1] ?? '').trim();
    if (AFTER_REASON.test(text)) break;
    const coded = /^code (\S+)$/.exec(text);
    if (coded && code === undefined) code = coded[1];
    else if (text) paragraphs.at(-1)!.push(text);
    else if (paragraphs.at(-1)!.length > 0) paragraphs.push([]);
  }
  const said = paragraphs.filter((paragraph) => paragraph.length > 0).map((paragraph) => paragraph.join(' '));
  // A usage error's first paragraph is the reason; the command's description and options follow.
  const reason = code === 'EUSAGE' ? said.slice(0, 1) : said;
  if (reason.length === 0) return code ? `npm error ${code}` : undefined;
  const joined = `${reason.join(' ')}${code ? ` (npm error ${code})` : ''}`;
  return joined.length > MAX_REASON_CHARS ? `${joined.slice(0, MAX_REASON_CHARS - 1)}…` : joined;
}

/** The newest debug log npm wrote into the job's logs directory, if any; the directory is the job's, so nothing in it is followed. */
export async function newestNpmDebugLog(root: string): Promise<string | undefined> {
  const directory = join(root, NPM_LOGS_DIRECTORY);
  try {
    if (!(await lstat(directory)).isDirectory()) return undefined;
    // npm names them by the run's start time (2026-05-01T10_00_00_000Z-debug-0.log, -debug-1.log past its size):
    // the last one sorted is the newest run's start.
    const logs = (await readdir(directory)).filter((name) => name.endsWith('-debug-0.log')).sort();
    const newest = logs.at(-1);
    return newest ? join(directory, newest) : undefined;
  } catch {
    return undefined;
  }
}
