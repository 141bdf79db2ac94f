/**
 * The spellings under which a secret can show up in what a script reports:
 * as typed, URL-encoded in a query string or form body, base64 in an
 * Authorization header or a token, hex in a digest-like dump, and escaped in
 * JSON (once in a JSON document, twice when that document is logged as a JSON
 * string, as trace files do).
 */
import { base64Fragments } from './base64-fragments.js';

export function secretForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const forms = new Set<string>([
    secret,
    ...percentEncodings(secret),
    ...jsonEscapings(secret),
    bytes.toString('hex'),
    bytes.toString('hex').toUpperCase(),
    bytes.toString('base64'),
    bytes.toString('base64').replace(/=+$/, ''),
    bytes.toString('base64url'),
    ...base64Fragments(bytes, 'base64'),
    ...base64Fragments(bytes, 'base64url'),
  ]);
  forms.delete('');
  return [...forms];
}

function percentEncodings(secret: string): string[] {
  let component: string;
  let uri: string;
  try {
    component = encodeURIComponent(secret);
    uri = encodeURI(secret);
  } catch {
    // A lone surrogate cannot be percent-encoded, so no URL holds it that way.
    return [];
  }
  // WHATWG form encoding: space as '+', and !'()~ encoded too.
  const form = new URLSearchParams([['', secret]]).toString().slice(1);
  const encoded = [component, component.replaceAll('%20', '+'), uri, form];
  return [...encoded, ...encoded.map(lowerCasePercentHex)];
}

function lowerCasePercentHex(text: string): string {
  return text.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
}

function jsonEscapings(secret: string): string[] {
  const escaped = JSON.stringify(secret).slice(1, -1);
  // Encoders that keep output ASCII (Python's json, many Java libraries) write \uXXXX for every non-ASCII unit.
  const asciiLower = escaped.replace(/[\u0080-\uffff]/g, (unit) => unicodeEscape(unit, false));
  const asciiUpper = escaped.replace(/[\u0080-\uffff]/g, (unit) => unicodeEscape(unit, true));
  const twice = JSON.stringify(escaped).slice(1, -1);
  return [escaped, asciiLower, asciiUpper, twice];
}

function unicodeEscape(unit: string, upperCase: boolean): string {
  const hex = unit.charCodeAt(0).toString(16).padStart(4, '0');
  return `\\u${upperCase ? hex.toUpperCase() : hex}`;
}
