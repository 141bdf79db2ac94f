/**
 * An artifact's name and content type, as the service gets them. Both come
 * from the script (an attachment's name, its file's extension, the type it
 * declared), so both are scrubbed with the job's scrubber first — before
 * anything else changes their spelling, which could break a secret's plain
 * form and still leave, say, its base64 one — then made to fit: the name to
 * the service's artifact name rule, the type to a bare `type/subtype`.
 */
import { MAX_ARTIFACT_NAME } from '../protocol/agent-api.js';

export interface TextScrubber {
  text(text: string): string;
}

export interface SuppliedArtifact {
  /** The name as the script gave it (an attachment's name, a test's title), or a whole file name. */
  name: string;
  /** The extension to end the name with, dot or not (the file's, as the script named it); none when absent. */
  extension?: string;
  /** The content type the script declared. */
  contentType: string;
}

export interface ArtifactLabel {
  name: string;
  contentType: string;
}

const MAX_EXTENSION = 10;
const FALLBACK_NAME = 'artifact';
const FALLBACK_EXTENSION = 'bin';
export const FALLBACK_CONTENT_TYPE = 'application/octet-stream';
/** RFC 6838 restricted names, lower case; parameters (`; charset=…`) are not kept. */
const CONTENT_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

/**
 * A safe name and content type for an artifact. `affixes` are the agent's own
 * (a number, an index) and are kept whole: the script's part is what gets cut
 * to fit. A name already safe comes back unchanged.
 */
export function safeArtifactLabel(
  scrubber: TextScrubber,
  supplied: SuppliedArtifact,
  affixes: { prefix?: string; suffix?: string } = {},
): ArtifactLabel {
  return { name: safeArtifactName(scrubber, supplied, affixes), contentType: safeContentType(scrubber, supplied.contentType) };
}

export function safeArtifactName(
  scrubber: TextScrubber,
  supplied: Pick<SuppliedArtifact, 'name' | 'extension'>,
  affixes: { prefix?: string; suffix?: string } = {},
): string {
  const prefix = settle(scrubber, affixes.prefix ?? '', nameCharacters);
  const suffix = settle(scrubber, affixes.suffix ?? '', nameCharacters);
  const extension =
    supplied.extension === undefined ? '' : `.${settle(scrubber, supplied.extension, extensionCharacters) || FALLBACK_EXTENSION}`;
  const room = Math.max(MAX_ARTIFACT_NAME - prefix.length - suffix.length - extension.length, 1);
  const stem = settle(scrubber, supplied.name, stemCharacters).slice(0, room);
  // Joined, the parts could spell a secret none of them does alone; and the whole must fit the rule.
  const name = settle(scrubber, `${prefix}${stem || FALLBACK_NAME}${suffix}${extension}`, wholeName);
  return name !== '' ? name : FALLBACK_NAME;
}

/** The declared type, lower-cased and without parameters, when it is a plain `type/subtype`; application/octet-stream otherwise. */
export function safeContentType(scrubber: TextScrubber, contentType: string): string {
  const bare = (scrubber.text(contentType).split(';')[0] ?? '').trim().toLowerCase();
  // Lower-casing could spell a secret anew: then the type says nothing at all.
  return CONTENT_TYPE.test(bare) && scrubber.text(bare) === bare ? bare : FALLBACK_CONTENT_TYPE;
}

/**
 * Scrubbed, then made to fit — again and again while the fitting spells a
 * secret anew ("tok en" becomes "tok-en"). Each round that finds one makes
 * the text shorter (at least 4 characters become one dash), so it ends.
 */
function settle(scrubber: TextScrubber, text: string, fit: (text: string) => string): string {
  let current = fit(scrubber.text(text));
  for (let scrubbed = scrubber.text(current); scrubbed !== current; scrubbed = scrubber.text(current)) current = fit(scrubbed);
  return current;
}

function nameCharacters(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]+/g, '-');
}

/** Without separators at its ends or dashes in a row, so the agent's affixes and the extension join it cleanly. */
function stemCharacters(text: string): string {
  return nameCharacters(text).replace(/-{2,}/g, '-').replace(/^[-._]+|[-._]+$/g, '');
}

function extensionCharacters(text: string): string {
  return text.replace(/[^A-Za-z0-9]+/g, '').slice(0, MAX_EXTENSION);
}

/** The rule in full: the allowed characters, a letter or digit first, at most 200. */
function wholeName(text: string): string {
  return nameCharacters(text).replace(/^[^A-Za-z0-9]+/, '').slice(0, MAX_ARTIFACT_NAME);
}
