/**
 * The findings file of a browser check is written inside the job, so the
 * agent takes nothing of it on trust: shapes checked, lists and texts cut.
 */
import { describe, expect, it } from 'vitest';
import { FINDING_TEXT_LIMIT, FINDINGS_LIMIT } from '../../src/agent/browser/browser-entry.js';
import { parseBrowserFindings } from '../../src/agent/browser/browser-findings.js';

describe('browser findings', () => {
  it('keeps well-formed entries as written', () => {
    const findings = parseBrowserFindings(
      JSON.stringify({
        consoleErrors: [{ source: 'console', text: 'boom', url: 'http://shop/', test: 't' }],
        failedRequests: [{ url: 'http://shop/x.png', method: 'GET', resourceType: 'image', status: 404, test: 't' }],
        webVitals: [{ url: 'http://shop/', lcpMs: 120.5, cls: 0.01, fcpMs: 100, ttfbMs: 20, domContentLoadedMs: 50, loadMs: 60 }],
        dropped: { consoleErrors: 0, failedRequests: 0, webVitals: 0 },
      }),
    );
    expect(findings).toEqual({
      consoleErrors: [{ source: 'console', text: 'boom', url: 'http://shop/', test: 't' }],
      failedRequests: [{ url: 'http://shop/x.png', method: 'GET', resourceType: 'image', status: 404, test: 't' }],
      webVitals: [{ url: 'http://shop/', lcpMs: 120.5, cls: 0.01, fcpMs: 100, ttfbMs: 20, domContentLoadedMs: 50, loadMs: 60 }],
    });
  });

  it('drops what a script forged, and cuts what is too long or too many', () => {
    const findings = parseBrowserFindings(
      JSON.stringify({
        consoleErrors: [
          { source: 'evil', text: 'x' },
          { source: 'console', text: 42 },
          { source: 'pageerror', text: 'y'.repeat(FINDING_TEXT_LIMIT * 10), extra: { deep: true } },
          ...Array.from({ length: FINDINGS_LIMIT * 3 }, () => ({ source: 'console', text: 'again' })),
        ],
        failedRequests: [{ url: 'http://a/', method: 'GET', status: 99999 }, { method: 'GET' }, 'not an object'],
        webVitals: [{ url: 'http://a/', lcpMs: -5, cls: 'big', ttfbMs: Number.MAX_VALUE }],
        dropped: { consoleErrors: -3, failedRequests: 1e12 },
      }),
    );
    expect(findings.consoleErrors).toHaveLength(FINDINGS_LIMIT - 2);
    expect(findings.consoleErrors[0]).toEqual({ source: 'pageerror', text: 'y'.repeat(FINDING_TEXT_LIMIT) });
    expect(findings.failedRequests).toEqual([{ url: 'http://a/', method: 'GET' }]);
    expect(findings.webVitals).toEqual([
      { url: 'http://a/', lcpMs: null, cls: null, fcpMs: null, ttfbMs: Number.MAX_VALUE, domContentLoadedMs: null, loadMs: null },
    ]);
    expect(findings.dropped).toEqual({ consoleErrors: 0, failedRequests: 1_000_000, webVitals: 0 });
  });

  it('makes nothing of a file that is not an object', () => {
    expect(parseBrowserFindings('[1,2,3]')).toEqual({ consoleErrors: [], failedRequests: [], webVitals: [] });
    expect(() => parseBrowserFindings('not json')).toThrow();
  });
});
