/**
 * Playwright's HTML report of a suite, as one zip the agent uploads. The
 * report is the sandbox's writing and holds what the tests printed and
 * attached, so every file is taken as attachments are (a regular file really
 * inside the job's directory, copied through one checked handle) and
 * scrubbed on its own before it is zipped: the outer zip's scrub goes one
 * level deep only, and the report nests deeper — traces are zips in `data/`,
 * and `index.html` carries the report itself as a base64 zip of JSON files,
 * which is decoded, scrubbed entry by entry and put back.
 */
import { createWriteStream } from 'node:fs';
import { lstat, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';
import { copyContainedFile } from '../sandbox/contained-file.js';
import type { JobScrubber, ResultScrubber } from '../script-harness/scrubbers.js';

/** Where the agent has Playwright write the report, under the job's directory. */
export const HTML_REPORT_FOLDER = 'playwright-report';
export const HTML_REPORT_ARTIFACT = 'playwright-report.zip';

/** A report is its page, the trace viewer's files and one file per attachment. */
const MAX_FILES = 5000;
/** How the HTML reporter embeds the report's data in index.html (Playwright 1.35 and later). */
const EMBEDDED_START = '<script id="playwrightReportBase64" type="application/zip">data:application/zip;base64,';
const EMBEDDED_END = '</script>';

export type FileScrubber = JobScrubber['file'];

/**
 * The job's file scrubber. The harness hands every runner its JobScrubber,
 * typed as the result scrubber most runners need; undefined where it is not
 * one, and then no report leaves.
 */
export function fileScrubberOf(scrub: ResultScrubber): FileScrubber | undefined {
  const file = (scrub as Partial<JobScrubber>).file;
  return typeof file === 'function' ? file.bind(scrub) : undefined;
}

/**
 * Zips the report in `folder` (inside the job's directory `root`) into
 * `scratch`, a directory of the agent's own, every file scrubbed. Returns the
 * zip, or why there is none.
 */
export async function packHtmlReport(
  folder: string,
  root: string,
  scratch: string,
  scrubFile: FileScrubber,
  limitBytes: number,
): Promise<{ zip: string } | { skipped: string }> {
  const files: string[] = [];
  const walk = async (relative: string): Promise<void> => {
    for (const entry of await readdir(join(folder, relative), { withFileTypes: true })) {
      const name = relative ? `${relative}/${entry.name}` : entry.name;
      // Links, FIFOs and devices are no part of a report Playwright wrote: left out, never followed.
      if (entry.isDirectory()) await walk(name);
      else if (entry.isFile()) files.push(name);
      if (files.length > MAX_FILES) throw new Error(`it has more than ${MAX_FILES} files`);
    }
  };
  try {
    if (!(await lstat(folder)).isDirectory()) return { skipped: `${HTML_REPORT_FOLDER} is not a directory` };
    await walk('');
  } catch (error) {
    return { skipped: `it was not read: ${(error as Error).message}` };
  }
  if (!files.includes('index.html')) return { skipped: 'it has no index.html' };

  const zip = new yazl.ZipFile();
  const zipPath = join(scratch, HTML_REPORT_ARTIFACT);
  const written = pipeline(zip.outputStream, createWriteStream(zipPath));
  let total = 0;
  try {
    for (const [index, name] of files.entries()) {
      const copy = join(scratch, `original-${index}`);
      const scrubbed = join(scratch, `scrubbed-${index}`);
      total += (await copyContainedFile(join(folder, name), root, copy, Math.max(0, limitBytes - total))).size;
      if (name === 'index.html') await scrubReportPage(copy, scratch, scrubFile);
      await scrubFile(copy, scrubbed, 'application/octet-stream');
      await rm(copy, { force: true });
      zip.addFile(scrubbed, name);
    }
  } catch (error) {
    zip.end();
    await written.catch(() => undefined);
    return { skipped: `it was not taken: ${(error as Error).message}` };
  }
  zip.end();
  await written;
  return { zip: zipPath };
}

/** The report's data, embedded in its page as a base64 zip, scrubbed entry by entry in place. */
async function scrubReportPage(page: string, scratch: string, scrubFile: FileScrubber): Promise<void> {
  const html = await readFile(page, 'latin1');
  const start = html.indexOf(EMBEDDED_START);
  if (start < 0) return;
  const dataStart = start + EMBEDDED_START.length;
  const end = html.indexOf(EMBEDDED_END, dataStart);
  if (end < 0) throw new Error("the report's embedded data does not end");
  const embedded = join(scratch, 'embedded.zip');
  const scrubbed = join(scratch, 'embedded-scrubbed.zip');
  await writeFile(embedded, Buffer.from(html.slice(dataStart, end), 'base64'));
  await scrubFile(embedded, scrubbed, 'application/zip');
  const data = (await readFile(scrubbed)).toString('base64');
  await rm(embedded, { force: true });
  await rm(scrubbed, { force: true });
  await writeFile(page, html.slice(0, dataStart) + data + html.slice(end), 'latin1');
}
