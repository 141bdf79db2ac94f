/**
 * What every secret is replaced with. Fixed, so the replacement says nothing
 * about the secret's length; plain ASCII with no JSON, URL or base64 meaning,
 * so a replacement inside JSON text keeps it valid JSON.
 */
export const SCRUB_MARKER = '*****';
