/**
 * What the agent bundle's build (tools/bundle-agent.ts) writes in: its
 * package version and that it is the bundle. Undeclared at run time when
 * Outpost runs from dist/ or src/, hence the typeof.
 */
declare const OUTPOST_BUNDLE: { version: string } | undefined;

/** The bundle's version; undefined outside the bundle, where package.json says it. */
export const BUNDLED_VERSION: string | undefined = typeof OUTPOST_BUNDLE === 'object' ? OUTPOST_BUNDLE.version : undefined;

/**
 * The bundle is the uptime image's agent and is tested as that alone: its
 * agent runs in uptime mode only.
 */
export const UPTIME_ONLY_BUILD: boolean = typeof OUTPOST_BUNDLE === 'object';
