/**
 * Gathers what arrives within one event-loop turn and hands it over as one
 * batch: a result batch completes dozens of sessions at once, and their
 * follow-ups then cost one query rather than one each; a claim starts dozens
 * of probes, and they cross to a probe thread in one message.
 */
export interface PerTurn<T> {
  add(item: T): void;
  /** Hands over what is gathered now, rather than at the end of the turn. */
  flush(): void;
}

export function perTurn<T>(handle: (items: T[]) => void): PerTurn<T> {
  let items: T[] = [];
  let scheduled: NodeJS.Immediate | undefined;
  const flush = () => {
    if (scheduled) clearImmediate(scheduled);
    scheduled = undefined;
    if (items.length === 0) return;
    const batch = items;
    items = [];
    handle(batch);
  };
  return {
    add(item) {
      items.push(item);
      scheduled ??= setImmediate(flush);
    },
    flush,
  };
}
