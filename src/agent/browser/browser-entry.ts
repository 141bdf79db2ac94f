/**
 * The test file a browser check's run starts from, written by the agent into
 * the job's `check/` directory (`ENTRY_FILE`). It registers hooks on
 * Playwright's `test` that watch every browser context of the run (the
 * `context` fixture's, and those the script opens with `browser.newContext`
 * or `browser.newPage`): console errors and uncaught page errors, requests
 * that failed or answered 4xx/5xx, and, after each test, the web vitals of
 * each page still open (LCP, CLS, FCP, TTFB, from the page's own
 * PerformanceObserver buffers). It writes them to a JSON file in the job's
 * directory after each test, then loads the check's script, whose tests
 * become this file's. Nothing here can fail a test: every hook swallows its
 * own errors and bounds its own time.
 */
export const ENTRY_FILE = 'outpost-browser.spec.cjs';
export const FINDINGS_FILE = 'browser-findings.json';

/** Of each list, kept per run; what is over is only counted. */
export const FINDINGS_LIMIT = 50;
export const FINDING_TEXT_LIMIT = 1000;

/** Evaluated in each open page after a test: buffered performance entries, read without waiting for more. */
const VITALS_SOURCE = String.raw`(async () => {
  const read = (type) => new Promise((resolve) => {
    const entries = [];
    try {
      const observer = new PerformanceObserver((list) => { for (const entry of list.getEntries()) entries.push(entry); });
      observer.observe({ type, buffered: true });
      setTimeout(() => {
        for (const entry of observer.takeRecords()) entries.push(entry);
        observer.disconnect();
        resolve(entries);
      }, 50);
    } catch (error) {
      resolve(entries);
    }
  });
  const [lcp, shifts, paints] = await Promise.all([read('largest-contentful-paint'), read('layout-shift'), read('paint')]);
  const round = (value) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.round(value * 10) / 10 : null);
  const navigation = performance.getEntriesByType('navigation')[0];
  const largest = lcp[lcp.length - 1];
  const fcp = paints.find((entry) => entry.name === 'first-contentful-paint');
  let cls = 0;
  for (const shift of shifts) if (!shift.hadRecentInput) cls += shift.value;
  return {
    url: location.href,
    lcpMs: largest ? round(largest.renderTime || largest.startTime) : null,
    cls: Math.round(cls * 10000) / 10000,
    fcpMs: fcp ? round(fcp.startTime) : null,
    ttfbMs: navigation ? round(navigation.responseStart) : null,
    domContentLoadedMs: navigation ? round(navigation.domContentLoadedEventEnd) : null,
    loadMs: navigation ? round(navigation.loadEventEnd) : null,
  };
})()`;

/** The entry file's source for a run whose findings go to `findingsPath`. */
export function browserEntrySource(findingsPath: string, scriptFile: string): string {
  return `'use strict';
// Written by the Outpost agent for one browser check run. Watches what the
// pages saw (console errors, failed requests, web vitals) and writes it
// beside the run, then loads the check's script: its tests are this file's.
const { test } = require('@playwright/test');
const { writeFileSync } = require('node:fs');

const FINDINGS_FILE = ${JSON.stringify(findingsPath)};
const LIMIT = ${FINDINGS_LIMIT};
const TEXT_LIMIT = ${FINDING_TEXT_LIMIT};
const EVALUATE_MS = 2000;
const VITALS = ${JSON.stringify(VITALS_SOURCE)};

const findings = { consoleErrors: [], failedRequests: [], webVitals: [], dropped: { consoleErrors: 0, failedRequests: 0, webVitals: 0 } };
const watched = new WeakSet();
const patched = new WeakSet();
let contexts = new Set();
let currentTest = '';

function cut(value) {
  const text = String(value === undefined || value === null ? '' : value);
  return text.length > TEXT_LIMIT ? text.slice(0, TEXT_LIMIT) : text;
}
function keep(list, entry) {
  if (findings[list].length < LIMIT) findings[list].push(entry);
  else findings.dropped[list] += 1;
}
function quietly(action) {
  try {
    action();
  } catch {
    // recording what a page saw never fails the check
  }
}
function pageUrl(page) {
  try {
    return page ? page.url() : '';
  } catch {
    return '';
  }
}
function watchPage(page) {
  if (watched.has(page)) return;
  watched.add(page);
  page.on('pageerror', (error) =>
    quietly(() => keep('consoleErrors', { source: 'pageerror', text: cut(error && error.message ? error.message : error), url: cut(pageUrl(page)), test: currentTest })),
  );
}
function watchContext(context) {
  contexts.add(context);
  if (watched.has(context)) return;
  watched.add(context);
  context.on('console', (message) =>
    quietly(() => {
      if (message.type() !== 'error') return;
      const location = message.location();
      keep('consoleErrors', { source: 'console', text: cut(message.text()), url: cut((location && location.url) || pageUrl(message.page())), test: currentTest });
    }),
  );
  context.on('requestfailed', (request) =>
    quietly(() => {
      const failure = request.failure();
      keep('failedRequests', { url: cut(request.url()), method: request.method(), resourceType: request.resourceType(), failure: cut(failure ? failure.errorText : 'failed'), test: currentTest });
    }),
  );
  context.on('response', (response) =>
    quietly(() => {
      const status = response.status();
      if (status < 400) return;
      const request = response.request();
      keep('failedRequests', { url: cut(response.url()), method: request.method(), resourceType: request.resourceType(), status, test: currentTest });
    }),
  );
  context.on('page', (page) => quietly(() => watchPage(page)));
  for (const page of context.pages()) watchPage(page);
}
function write() {
  quietly(() => writeFileSync(FINDINGS_FILE, JSON.stringify(findings)));
}
function bounded(promise) {
  let timer;
  const timeout = new Promise((resolve) => (timer = setTimeout(() => resolve(undefined), EVALUATE_MS)));
  return Promise.race([promise.catch(() => undefined), timeout]).finally(() => clearTimeout(timer));
}

test.beforeEach(async ({ browser, context }, testInfo) => {
  currentTest = cut(testInfo.title);
  quietly(() => watchContext(context));
  quietly(() => {
    if (patched.has(browser)) return;
    patched.add(browser);
    const newContext = browser.newContext;
    browser.newContext = async function (...args) {
      const created = await newContext.apply(this, args);
      quietly(() => watchContext(created));
      return created;
    };
  });
});

test.afterEach(async () => {
  const seen = contexts;
  contexts = new Set();
  for (const context of seen) {
    let pages = [];
    quietly(() => (pages = context.pages()));
    for (const page of pages) {
      if (page.isClosed() || pageUrl(page).startsWith('about:')) continue;
      const vitals = await bounded(page.evaluate(VITALS));
      if (vitals && typeof vitals === 'object') keep('webVitals', Object.assign(vitals, { test: currentTest }));
    }
  }
  write();
});

require(${JSON.stringify(`./${scriptFile}`)});
`;
}
