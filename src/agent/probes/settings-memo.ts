/**
 * Parsed probe settings kept by their JSON text. The runs of an uptime check
 * carry the same settings every time, and cloning, defaulting and validating
 * them again for each run cost more of the agent's CPU than anything else of
 * its own outside the exchange (docs/performance.md). Kept deeply frozen, so
 * no run can change what the next is given; at most `capacity` of them, the
 * least recently used dropped first. Settings that fail to parse are not
 * kept: they throw again each time.
 */
export function memoizeSettings<Settings>(parse: (raw: unknown) => Settings, capacity = 500): (raw: unknown) => Settings {
  const parsed = new Map<string, Settings>();
  return (raw) => {
    const key = JSON.stringify(raw);
    const known = parsed.get(key);
    if (known !== undefined) {
      // A Map iterates in insertion order: re-inserted, the entry is now the newest.
      parsed.delete(key);
      parsed.set(key, known);
      return known;
    }
    const settings = deepFreeze(parse(raw));
    parsed.set(key, settings);
    if (parsed.size > capacity) parsed.delete(parsed.keys().next().value as string);
    return settings;
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const property of Object.values(value)) deepFreeze(property);
  }
  return value;
}
