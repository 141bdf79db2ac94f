/**
 * A status page's branding: logo, favicon, theme and colours. Named as the
 * comparable product's status page API names them (`logo`, `redirectTo`,
 * `favicon`, `defaultTheme`, `themeColors.{light,dark}.*`), so its users'
 * payloads carry over; colour keys it has that this page has no use for are
 * dropped like any unknown field.
 */

export const THEMES = ['AUTO', 'LIGHT', 'DARK'] as const;
export type Theme = (typeof THEMES)[number];

/** The colours a theme may set, each `#rrggbb`; a colour left out keeps the built-in one. */
export const THEME_COLOR_KEYS = [
  'bodyBackgroundColor',
  'bodyFontColor',
  'bodyFontColorMuted',
  'headerBackgroundColor',
  'headerFontColor',
  'linkFontColor',
  'cardBackgroundColor',
  'borderColor',
  'primaryButtonBackgroundColor',
  'primaryButtonFontColor',
] as const;
export type ThemeColorKey = (typeof THEME_COLOR_KEYS)[number];
export type ThemeColors = Partial<Record<ThemeColorKey, string>>;

export const COLOR_PATTERN = '^#[0-9a-fA-F]{6}$';
const COLOR = new RegExp(COLOR_PATTERN);

export interface Branding {
  logo: string | null;
  redirectTo: string | null;
  favicon: string | null;
  defaultTheme: Theme;
  themeColors: { light: ThemeColors; dark: ThemeColors };
}

export const NO_BRANDING: Branding = {
  logo: null,
  redirectTo: null,
  favicon: null,
  defaultTheme: 'AUTO',
  themeColors: { light: {}, dark: {} },
};

export const BRANDING_URL_FIELDS = ['logo', 'redirectTo', 'favicon'] as const;
export const MAX_URL_LENGTH = 2048;

/**
 * Why `value` may not be a branding URL, or undefined when it may: an
 * absolute https URL with a host, no credentials, and nothing but printable
 * ASCII (a space or a quote must be percent-encoded). No data:, javascript:
 * or http: URLs: the page only ever puts it in an `src` or `href`, escaped,
 * and its Content-Security-Policy loads images over https only.
 */
export function brandingUrlProblem(value: string): string | undefined {
  if (value.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  if (!/^[\x21-\x7e]+$/.test(value)) return 'must be an https URL of printable ASCII characters, with no spaces';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute https URL';
  }
  if (url.protocol !== 'https:') return 'must be an https URL';
  if (!url.hostname) return 'must name a host';
  if (url.username || url.password) return 'must not carry credentials';
  return undefined;
}

/** Colours as stored: lower-case, only the known keys. */
export function normalizeColors(colors: Record<string, unknown> | undefined): ThemeColors {
  const normalized: ThemeColors = {};
  for (const key of THEME_COLOR_KEYS) {
    const value = colors?.[key];
    if (typeof value === 'string' && COLOR.test(value)) normalized[key] = value.toLowerCase();
  }
  return normalized;
}

type Palette = Record<ThemeColorKey, string>;

const LIGHT: Palette = {
  bodyBackgroundColor: '#f6f8fa',
  bodyFontColor: '#1f2328',
  bodyFontColorMuted: '#59636e',
  headerBackgroundColor: '#ffffff',
  headerFontColor: '#1f2328',
  linkFontColor: '#0969da',
  cardBackgroundColor: '#ffffff',
  borderColor: '#d1d9e0',
  primaryButtonBackgroundColor: '#1f883d',
  primaryButtonFontColor: '#ffffff',
};

const DARK: Palette = {
  bodyBackgroundColor: '#0d1117',
  bodyFontColor: '#e6edf3',
  bodyFontColorMuted: '#9198a1',
  headerBackgroundColor: '#151b23',
  headerFontColor: '#e6edf3',
  linkFontColor: '#4493f8',
  cardBackgroundColor: '#151b23',
  borderColor: '#3d444d',
  primaryButtonBackgroundColor: '#238636',
  primaryButtonFontColor: '#ffffff',
};

const CSS_VARIABLE: Record<ThemeColorKey, string> = {
  bodyBackgroundColor: '--body-bg',
  bodyFontColor: '--body-fg',
  bodyFontColorMuted: '--body-muted',
  headerBackgroundColor: '--header-bg',
  headerFontColor: '--header-fg',
  linkFontColor: '--link',
  cardBackgroundColor: '--card-bg',
  borderColor: '--border',
  primaryButtonBackgroundColor: '--button-bg',
  primaryButtonFontColor: '--button-fg',
};

function declarations(base: Palette, overrides: ThemeColors): string {
  // Only values that match COLOR get here: nothing typed can close the rule.
  return THEME_COLOR_KEYS.map((key) => {
    const value = overrides[key];
    return `${CSS_VARIABLE[key]}:${value !== undefined && COLOR.test(value) ? value : base[key]}`;
  }).join(';');
}

/**
 * The CSS custom properties of the page's themes: the light or dark one
 * alone, or (AUTO) the light one with the dark one for visitors whose
 * system prefers dark.
 */
export function themeCss(branding: Pick<Branding, 'defaultTheme' | 'themeColors'>): string {
  const light = `:root{color-scheme:light;${declarations(LIGHT, branding.themeColors.light)}}`;
  const dark = `:root{color-scheme:dark;${declarations(DARK, branding.themeColors.dark)}}`;
  if (branding.defaultTheme === 'LIGHT') return light;
  if (branding.defaultTheme === 'DARK') return dark;
  return `${light}@media (prefers-color-scheme:dark){${dark}}`;
}
