/**
 * A JSON result with every string in it, keys included, passed through a text
 * scrubber. Follows what JSON.stringify would write (toJSON, own enumerable
 * keys), so what is scrubbed is what gets serialized. Parts with nothing to
 * replace are returned as they are, not copied. Walks with a stack of its own
 * rather than recursion, so nesting JSON.stringify accepts cannot overflow it.
 */

type TextScrub = (text: string) => string;

/** An object or array being walked: its children, and what they became. */
interface Frame {
  /** Returned as it is when nothing under it changed. */
  original: object;
  isArray: boolean;
  children: unknown[];
  next: number;
  scrubbedKeys: string[];
  scrubbedChildren: unknown[];
  changed: boolean;
}

export function scrubDeep(root: unknown, scrubText: TextScrub): unknown {
  const frames: Frame[] = [];
  const open = new Set<object>();
  let result = visit(root, scrubText, frames, open);
  while (frames.length > 0) {
    const frame = frames.at(-1)!;
    // Back at a frame after its first child: `result` is what that last child became.
    if (frame.next > 0) {
      frame.scrubbedChildren.push(result);
      if (result !== frame.children[frame.next - 1]) frame.changed = true;
    }
    if (frame.next < frame.children.length) {
      result = visit(frame.children[frame.next++], scrubText, frames, open);
      continue;
    }
    frames.pop();
    open.delete(frame.original);
    result = finish(frame);
  }
  return result;
}

/** A leaf's scrubbed value; for an object or array, pushes a frame for it instead. */
function visit(value: unknown, scrubText: TextScrub, frames: Frame[], open: Set<object>): unknown {
  switch (typeof value) {
    case 'string':
      return scrubText(value);
    case 'number':
    case 'bigint': {
      // A numeric secret (a PIN, an account number) in a result is still the secret.
      const text = String(value);
      const scrubbed = scrubText(text);
      return scrubbed === text ? value : scrubbed;
    }
    case 'object': {
      if (value === null) return value;
      if (open.has(value)) return '[Circular]';
      const toJSON: unknown = (value as { toJSON?: unknown }).toJSON;
      const serialized: unknown = typeof toJSON === 'function' ? toJSON.call(value, '') : value;
      if (typeof serialized !== 'object' || serialized === null) {
        const scrubbed = visit(serialized, scrubText, frames, open);
        return scrubbed === serialized ? value : scrubbed;
      }
      open.add(value);
      frames.push(frame(value, serialized, scrubText));
      return undefined;
    }
    default:
      return value;
  }
}

function frame(original: object, serialized: object, scrubText: TextScrub): Frame {
  const isArray = Array.isArray(serialized);
  const keys = isArray ? [] : Object.keys(serialized);
  const scrubbedKeys = keys.map(scrubText);
  return {
    original,
    isArray,
    children: isArray ? (serialized as unknown[]) : keys.map((key) => (serialized as Record<string, unknown>)[key]),
    next: 0,
    scrubbedKeys,
    scrubbedChildren: [],
    changed: scrubbedKeys.some((key, index) => key !== keys[index]),
  };
}

function finish(frame: Frame): unknown {
  if (!frame.changed) return frame.original;
  if (frame.isArray) return frame.scrubbedChildren;
  // fromEntries defines properties, so a "__proto__" key from JSON.parse stays a plain key.
  return Object.fromEntries(frame.scrubbedKeys.map((key, index) => [key, frame.scrubbedChildren[index]]));
}
