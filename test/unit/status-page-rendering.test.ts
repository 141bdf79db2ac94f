import { describe, expect, it } from 'vitest';
import { brandingUrlProblem, themeCss } from '../../src/service/status-pages/branding.js';
import { escapeXml } from '../../src/service/status-pages/feeds.js';
import { formatUtc } from '../../src/service/status-pages/render.js';
import { availabilityBand, formatPercent, uptimeByService } from '../../src/service/status-pages/uptime.js';

describe('status page rendering helpers', () => {
  it('accepts https URLs only, without credentials or characters that need escaping', () => {
    expect(brandingUrlProblem('https://cdn.example.com/logo.png?v=2&x=%20y')).toBeUndefined();
    for (const bad of ['http://x.test/l.png', 'data:image/png;base64,AA', 'javascript:alert(1)', '//x.test/l.png', 'https://a b.test/', 'https://u:p@x.test/', 'https://x.test/\u00e9', '']) {
      expect(brandingUrlProblem(bad), bad).toEqual(expect.any(String));
    }
  });

  it('writes only #rrggbb colours into the style, whatever is stored', () => {
    const css = themeCss({ defaultTheme: 'LIGHT', themeColors: { light: { borderColor: 'red;}</style><script>', linkFontColor: '#AbCdEf' }, dark: {} } });
    expect(css).not.toContain('red');
    expect(css).not.toContain('<');
    expect(css).toContain('--link:#AbCdEf');
    expect(css).toMatch(/^:root\{color-scheme:light;[^{}]*\}$/);
  });

  it('rounds uptime down, bands it, and fills 90 days', () => {
    expect(formatPercent(99.996)).toBe('99.99');
    expect(formatPercent(100)).toBe('100');
    expect(formatPercent(0)).toBe('0.00');
    expect([100, 99.5, 96, 90, 89.99, null].map(availabilityBand)).toEqual([0, 1, 2, 3, 4, 'none']);
    const now = new Date('2026-03-01T10:00:00Z');
    const uptime = uptimeByService(['s'], [{ serviceId: 's', day: '2026-02-28', runs: 4, passed: 3 }], now).get('s')!;
    expect(uptime.days).toHaveLength(90);
    expect(uptime.days[0]!.date).toBe('2025-12-02');
    expect(uptime.days.at(-1)).toEqual({ date: '2026-03-01', runs: 0, passed: 0, availability: null });
    expect(uptime.days.at(-2)).toEqual({ date: '2026-02-28', runs: 4, passed: 3, availability: 75 });
    expect(uptime.availability).toBe(75);
  });

  it('escapes XML and drops what XML cannot carry; formats UTC for readers without JavaScript', () => {
    expect(escapeXml('a & <b> "c" \'d\' \u0000\u0008\u000b\ufffe e\t\n')).toBe('a &amp; &lt;b&gt; &quot;c&quot; &apos;d&apos;  e\t\n');
    expect(formatUtc('2026-01-05T07:03:00.000Z')).toBe('5 Jan 2026, 07:03 UTC');
  });
});
