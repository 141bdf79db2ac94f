/**
 * HTTPS (type 65) and SVCB (type 64) record data, RFC 9460. dns-packet 5.x
 * (and its @leichtgewicht fork) does not know either type and hands the RDATA
 * over as raw bytes, so it is decoded here: SvcPriority, TargetName (never
 * compressed, §2.2), then SvcParams as key/length/value, keys ascending.
 */
import { DnsResponseError } from '../../errors/index.js';

export const SVCB_TYPE = 64;
export const HTTPS_TYPE = 65;

/** One decoded parameter: lists for alpn/mandatory/hints, a number for port, true for flags, text otherwise. */
export type SvcParamValue = string | number | true | string[];

export interface SvcbRecordData {
  /** 0 is AliasMode (the target is an alias, params are empty); anything else is ServiceMode. */
  priority: number;
  /** Without the trailing dot, like every other name in a result; the root (".", "this owner name") stays ".". */
  target: string;
  /** Keyed by the RFC 9460 presentation name (`alpn`, `port`…, `key<N>` for unregistered keys), in wire order. */
  params: Record<string, SvcParamValue>;
}

/** SvcParamKey registry (RFC 9460 §14.3.2, plus dohpath from RFC 9461 and ohttp from RFC 9540). */
const KEY_NAMES: ReadonlyMap<number, string> = new Map([
  [0, 'mandatory'],
  [1, 'alpn'],
  [2, 'no-default-alpn'],
  [3, 'port'],
  [4, 'ipv4hint'],
  [5, 'ech'],
  [6, 'ipv6hint'],
  [7, 'dohpath'],
  [8, 'ohttp'],
]);

function keyName(key: number): string {
  return KEY_NAMES.get(key) ?? `key${key}`;
}

/** Decodes HTTPS/SVCB RDATA; throws DnsResponseError when it breaks the RFC 9460 wire format. */
export function decodeSvcbRdata(rdata: Uint8Array, recordType = 'HTTPS'): SvcbRecordData {
  const bytes = Buffer.from(rdata.buffer, rdata.byteOffset, rdata.byteLength);
  const malformed = (reason: string): DnsResponseError =>
    new DnsResponseError(`Malformed ${recordType} record (${bytes.length} bytes of data): ${reason}`);
  if (bytes.length < 3) throw malformed('shorter than a priority and a target name');
  const priority = bytes.readUInt16BE(0);
  const { name: target, end } = readUncompressedName(bytes, 2, malformed);
  const params: Record<string, SvcParamValue> = {};
  let offset = end;
  let previousKey = -1;
  while (offset < bytes.length) {
    if (offset + 4 > bytes.length) throw malformed('a parameter header runs past the end of the data');
    const key = bytes.readUInt16BE(offset);
    const length = bytes.readUInt16BE(offset + 2);
    offset += 4;
    if (key <= previousKey) throw malformed(`parameter ${keyName(key)} is out of order or repeated`);
    if (offset + length > bytes.length) throw malformed(`parameter ${keyName(key)} runs past the end of the data`);
    params[keyName(key)] = decodeParam(key, bytes.subarray(offset, offset + length), malformed);
    previousKey = key;
    offset += length;
  }
  // AliasMode (priority 0) records should carry no parameters (§2.4.2); if one does, it is shown as sent.
  return { priority, target, params };
}

function decodeParam(key: number, value: Buffer, malformed: (reason: string) => DnsResponseError): SvcParamValue {
  const name = keyName(key);
  const fixed = (size: number): void => {
    if (value.length % size !== 0 || value.length === 0) {
      throw malformed(`${name} is ${value.length} bytes, not a non-empty multiple of ${size}`);
    }
  };
  switch (key) {
    case 0: {
      fixed(2);
      const keys: string[] = [];
      for (let i = 0; i < value.length; i += 2) keys.push(keyName(value.readUInt16BE(i)));
      return keys;
    }
    case 1: {
      const ids: string[] = [];
      let offset = 0;
      while (offset < value.length) {
        const length = value[offset] ?? 0;
        if (length === 0 || offset + 1 + length > value.length) {
          throw malformed('alpn has an empty or overlong protocol id');
        }
        ids.push(value.toString('latin1', offset + 1, offset + 1 + length));
        offset += 1 + length;
      }
      if (ids.length === 0) throw malformed('alpn is empty');
      return ids;
    }
    case 2:
    case 8:
      if (value.length !== 0) throw malformed(`${name} must be empty, it is ${value.length} bytes`);
      return true;
    case 3:
      if (value.length !== 2) throw malformed(`port is ${value.length} bytes, not 2`);
      return value.readUInt16BE(0);
    case 4: {
      fixed(4);
      const addresses: string[] = [];
      for (let i = 0; i < value.length; i += 4) addresses.push([...value.subarray(i, i + 4)].join('.'));
      return addresses;
    }
    case 5:
      return value.toString('base64');
    case 6: {
      fixed(16);
      const addresses: string[] = [];
      for (let i = 0; i < value.length; i += 16) addresses.push(formatIpv6(value.subarray(i, i + 16)));
      return addresses;
    }
    case 7:
      return value.toString('utf8');
    default:
      // Unregistered keys: the bytes as lowercase hex, so the JSON stays lossless and printable.
      return value.toString('hex');
  }
}

function readUncompressedName(
  bytes: Buffer,
  start: number,
  malformed: (reason: string) => DnsResponseError,
): { name: string; end: number } {
  const labels: string[] = [];
  let offset = start;
  for (;;) {
    if (offset >= bytes.length) throw malformed('the target name runs past the end of the data');
    const length = bytes[offset] ?? 0;
    offset += 1;
    if (length === 0) break;
    if ((length & 0xc0) !== 0) throw malformed('the target name is compressed or uses a reserved label type');
    if (offset + length > bytes.length) throw malformed('a target name label runs past the end of the data');
    labels.push(escapeLabel(bytes.subarray(offset, offset + length)));
    offset += length;
  }
  if (offset - start > 255) throw malformed('the target name is longer than 255 bytes');
  return { name: labels.length === 0 ? '.' : labels.join('.'), end: offset };
}

/** RFC 1035 §5.1 presentation: printable ASCII as is, dots and backslashes escaped, anything else as \DDD. */
function escapeLabel(label: Buffer): string {
  let text = '';
  for (const byte of label) {
    if (byte === 0x2e || byte === 0x5c) text += `\\${String.fromCharCode(byte)}`;
    else if (byte > 0x20 && byte < 0x7f) text += String.fromCharCode(byte);
    else text += `\\${byte.toString().padStart(3, '0')}`;
  }
  return text;
}

/** RFC 5952 text: lowercase, no leading zeros, the longest run of two or more zero groups as "::". */
function formatIpv6(bytes: Buffer): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i));
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < groups.length; ) {
    if (groups[i] !== 0) {
      i += 1;
      continue;
    }
    let j = i;
    while (j < groups.length && groups[j] === 0) j += 1;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (list: number[]): string => list.map((group) => group.toString(16)).join(':');
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLength))}`;
}

/**
 * Presentation format (RFC 9460 §2.1), as dig and zone files write it:
 * `1 . alpn="h2,h3" port=8443 ipv4hint=127.0.0.1`.
 */
export function formatSvcbRecord(record: SvcbRecordData): string {
  const parts = [String(record.priority), record.target === '.' ? '.' : `${record.target}.`];
  for (const [name, value] of Object.entries(record.params)) {
    parts.push(formatParam(name, value));
  }
  return parts.join(' ');
}

function formatParam(name: string, value: SvcParamValue): string {
  if (value === true) return name;
  if (typeof value === 'number') return `${name}=${value}`;
  if (Array.isArray(value)) {
    if (name !== 'alpn') return `${name}=${value.join(',')}`;
    // An alpn id may hold commas and backslashes: escaped once for the value list, again for the quoted string (§A.1).
    const list = value.map((id) => id.replace(/[\\,]/g, (c) => `\\${c}`)).join(',');
    return `${name}=${quote(Buffer.from(list, 'latin1'))}`;
  }
  if (/^key\d+$/.test(name)) return `${name}=${quote(Buffer.from(value, 'hex'))}`;
  if (name === 'dohpath') return `${name}=${quote(Buffer.from(value, 'utf8'))}`;
  return `${name}=${value}`;
}

/** A quoted character-string: quotes and backslashes escaped, bytes outside printable ASCII as \DDD. */
function quote(bytes: Buffer): string {
  let text = '';
  for (const byte of bytes) {
    if (byte === 0x22 || byte === 0x5c) text += `\\${String.fromCharCode(byte)}`;
    else if (byte >= 0x20 && byte < 0x7f) text += String.fromCharCode(byte);
    else text += `\\${byte.toString().padStart(3, '0')}`;
  }
  return `"${text}"`;
}
