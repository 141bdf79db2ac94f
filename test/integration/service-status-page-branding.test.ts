import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asNewAccount, expectErrorB } from '../support/agent-protocol.js';
import { DB_KINDS } from '../support/databases.js';
import { startTestService, type TestService } from '../support/service.js';

const url = () => `brand-${randomUUID().slice(0, 8)}`;

const BRANDING = {
  logo: 'https://cdn.shop.test/logo.svg',
  redirectTo: 'https://shop.test/',
  favicon: 'https://cdn.shop.test/favicon.ico',
  defaultTheme: 'DARK',
  themeColors: {
    light: { headerBackgroundColor: '#FFAA00', linkFontColor: '#0055cc' },
    dark: { bodyBackgroundColor: '#101010', primaryButtonBackgroundColor: '#00aa55' },
  },
};

describe.each(DB_KINDS)('status page branding (%s)', (kind) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(kind);
  });
  afterAll(async () => service?.close());

  it('stores logo, link, favicon, theme and colours (lower-cased), and a PUT without them clears them', async () => {
    const { call } = await asNewAccount(service);
    const address = url();
    const created = await call('POST', '/v1/status-pages', {
      name: 'Shop',
      url: address,
      ...BRANDING,
      // Keys the comparable product has and this page does not use are dropped, like any unknown field.
      themeColors: { ...BRANDING.themeColors, light: { ...BRANDING.themeColors.light, navigationFontColor: '#123456' } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({
      logo: BRANDING.logo,
      redirectTo: BRANDING.redirectTo,
      favicon: BRANDING.favicon,
      defaultTheme: 'DARK',
      themeColors: {
        light: { headerBackgroundColor: '#ffaa00', linkFontColor: '#0055cc' },
        dark: { bodyBackgroundColor: '#101010', primaryButtonBackgroundColor: '#00aa55' },
      },
    });
    expect(Object.keys(created.body.themeColors.light).sort()).toEqual(['headerBackgroundColor', 'linkFontColor']);
    expect((await call('GET', `/v1/status-pages/${created.body.id}`)).body).toEqual(created.body);

    const replaced = await call('PUT', `/v1/status-pages/${created.body.id}`, { name: 'Shop', url: address });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({
      logo: null,
      redirectTo: null,
      favicon: null,
      defaultTheme: 'AUTO',
      themeColors: { light: {}, dark: {} },
    });
    const nulls = await call('PUT', `/v1/status-pages/${created.body.id}`, { name: 'Shop', url: address, logo: null, favicon: null });
    expect(nulls.status).toBe(200);
    expect(nulls.body.logo).toBeNull();
  });

  it.each([
    ['an http logo', { logo: 'http://cdn.shop.test/logo.svg' }, ['logo']],
    ['a javascript: logo', { logo: 'javascript:alert(1)' }, ['logo']],
    ['a data: logo', { logo: 'data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=' }, ['logo']],
    ['a relative logo', { logo: '/logo.svg' }, ['logo']],
    ['a logo with a quote and a space', { logo: 'https://cdn.shop.test/a" onerror="alert(1)' }, ['logo']],
    ['a logo that is no string', { logo: 42 }, ['logo']],
    ['a favicon with credentials', { favicon: 'https://user:secret@cdn.shop.test/favicon.ico' }, ['favicon']],
    ['a redirectTo that is no URL', { redirectTo: 'shop dot test' }, ['redirectTo']],
    ['a logo too long', { logo: `https://cdn.shop.test/${'a'.repeat(2048)}` }, ['logo']],
    ['an unknown theme', { defaultTheme: 'PINK' }, ['defaultTheme']],
    ['a three-digit colour', { themeColors: { light: { bodyBackgroundColor: '#fff' } } }, ['themeColors.light.bodyBackgroundColor']],
    ['a named colour', { themeColors: { dark: { linkFontColor: 'red' } } }, ['themeColors.dark.linkFontColor']],
    [
      'a colour that would close the style rule',
      { themeColors: { light: { borderColor: '#000000;}body{display:none' } } },
      ['themeColors.light.borderColor'],
    ],
    [
      'several bad fields at once',
      { logo: 'ftp://x.test/l.png', favicon: 'http://x.test/f.ico', redirectTo: 'https://ok.test/' },
      ['logo', 'favicon'],
    ],
  ])('refuses %s: 400 in shape B naming the field, on create and on replace', async (_case, branding, fields) => {
    const { call } = await asNewAccount(service);
    expectErrorB(await call('POST', '/v1/status-pages', { name: 'Shop', url: url(), ...branding }), fields);
    expect((await call('GET', '/v1/status-pages')).body).toEqual([]);
    const address = url();
    const page = await call('POST', '/v1/status-pages', { name: 'Shop', url: address });
    expectErrorB(await call('PUT', `/v1/status-pages/${page.body.id}`, { name: 'Shop', url: address, ...branding }), fields);
    expect((await call('GET', `/v1/status-pages/${page.body.id}`)).body.logo).toBeNull();
  });

  it('applies the branding on the public page, escaped, under a policy that allows no other script or style', async () => {
    const { call } = await asNewAccount(service);
    const address = url();
    // Valid URL characters that mean something in HTML: escaped where they are written.
    const logo = "https://cdn.shop.test/logo.svg?v=1&name='shop'<x>";
    const created = await call('POST', '/v1/status-pages', { name: 'Shop <i>status</i>', url: address, ...BRANDING, logo });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const page = await fetch(`${service.url}/status/${address}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(
      '<img class="logo" src="https://cdn.shop.test/logo.svg?v=1&amp;name=&#39;shop&#39;&lt;x&gt;" alt="Shop &lt;i&gt;status&lt;/i&gt; logo" referrerpolicy="no-referrer">',
    );
    expect(html).toContain('<a href="https://shop.test/" rel="noopener noreferrer"><img class="logo"');
    expect(html).toContain('<link rel="icon" href="https://cdn.shop.test/favicon.ico">');
    expect(html).not.toContain('<i>');
    // DARK: the dark palette alone, with the page's own colours in it.
    expect(html).toMatch(/:root\{color-scheme:dark;[^}]*--body-bg:#101010/);
    expect(html).toMatch(/--button-bg:#00aa55/);
    expect(html).not.toMatch(/color-scheme:light/);

    const policy = page.headers.get('content-security-policy')!;
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("img-src 'self' https:");
    expect(policy).not.toContain('unsafe-inline');
    const nonce = /style-src 'nonce-([^']+)'/.exec(policy)![1]!;
    expect(html).toContain(`<style nonce="${nonce}">`);
    expect(/script-src '(sha256-[^']+)'/.exec(policy)).not.toBeNull();
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');

    // A fresh nonce per answer.
    const again = await fetch(`${service.url}/status/${address}`);
    expect(again.headers.get('content-security-policy')).not.toContain(nonce);
  });

  it('uses the built-in light theme with dark for visitors who prefer it when nothing is set', async () => {
    const address = url();
    await service.api('POST', '/v1/status-pages', { name: 'Plain', url: address });
    const html = await (await fetch(`${service.url}/status/${address}`)).text();
    expect(html).toMatch(/:root\{color-scheme:light;[^}]*\}@media \(prefers-color-scheme:dark\)\{:root\{color-scheme:dark;/);
    expect(html).not.toContain('class="logo"');
    expect(html).not.toContain('rel="icon"');
  });
});
