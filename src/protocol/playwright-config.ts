/**
 * A script check's Playwright configuration (`playwrightConfig`), the subset
 * of Playwright's own the comparable product's CLI sends with each browser
 * and multi-step check: `use` (baseURL, viewport, locale, headers, timeouts
 * and friends), `expect` and the test timeout. The service validates and
 * stores it; the agent lays it under its own settings (the browser it
 * launches, trace, video), which always win. Like every request body, what
 * Playwright options it does not know are dropped, not stored.
 */
import Type from 'typebox';

const Options = Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), { description: 'Passed to Playwright as given' });

export const PlaywrightUseSchema = Type.Object(
  {
    baseURL: Type.Optional(Type.String({ maxLength: 2048 })),
    colorScheme: Type.Optional(Type.Enum(['light', 'dark', 'no-preference'])),
    geolocation: Type.Optional(
      Type.Object({
        longitude: Type.Optional(Type.Number({ minimum: -180, maximum: 180 })),
        latitude: Type.Optional(Type.Number({ minimum: -90, maximum: 90 })),
        accuracy: Type.Optional(Type.Number({ minimum: 0 })),
      }),
    ),
    locale: Type.Optional(Type.String({ maxLength: 35 })),
    permissions: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50 })),
    timezoneId: Type.Optional(Type.String({ maxLength: 64 })),
    viewport: Type.Optional(
      Type.Object({
        width: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
        height: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
      }),
    ),
    deviceScaleFactor: Type.Optional(Type.Number({ minimum: 0.1, maximum: 10 })),
    hasTouch: Type.Optional(Type.Boolean()),
    isMobile: Type.Optional(Type.Boolean()),
    javaScriptEnabled: Type.Optional(Type.Boolean()),
    acceptDownloads: Type.Optional(Type.Boolean()),
    extraHTTPHeaders: Type.Optional(Type.Record(Type.String({ maxLength: 256 }), Type.String({ maxLength: 8192 }))),
    httpCredentials: Type.Optional(Options),
    ignoreHTTPSErrors: Type.Optional(Type.Boolean()),
    offline: Type.Optional(Type.Boolean()),
    actionTimeout: Type.Optional(Type.Integer({ minimum: 0, maximum: 240_000 })),
    navigationTimeout: Type.Optional(Type.Integer({ minimum: 0, maximum: 240_000 })),
    testIdAttribute: Type.Optional(Type.String({ maxLength: 100 })),
    launchOptions: Type.Optional(Options),
    contextOptions: Type.Optional(Options),
    bypassCSP: Type.Optional(Type.Boolean()),
    userAgent: Type.Optional(Type.String({ maxLength: 1024 })),
    proxy: Type.Optional(
      Type.Object({
        server: Type.String({ maxLength: 2048 }),
        username: Type.Optional(Type.String({ maxLength: 1024 })),
        password: Type.Optional(Type.String({ maxLength: 1024 })),
      }),
    ),
  },
);

export const PlaywrightCheckConfigSchema = Type.Object(
  {
    use: Type.Optional(PlaywrightUseSchema),
    expect: Type.Optional(
      Type.Object(
        {
          timeout: Type.Optional(Type.Integer({ minimum: 0, maximum: 240_000 })),
          toHaveScreenshot: Type.Optional(Options),
          toMatchSnapshot: Type.Optional(Options),
        },
      ),
    ),
    /** Each test's timeout in ms; the check's own 240 s still bounds the run. */
    timeout: Type.Optional(Type.Integer({ minimum: 0, maximum: 240_000 })),
  },
);
export type PlaywrightCheckConfig = Type.Static<typeof PlaywrightCheckConfigSchema>;
