import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, budget } from './api';

export interface Polled<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  /** When the data was last read, ms since the epoch. */
  updatedAt: number | undefined;
  refresh: () => void;
}

/** Waits `ms`, or less if `wake` is called; resolves false when aborted. */
function pause(ms: number, signal: AbortSignal, wakeRef: { current: (() => void) | undefined }): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const done = (value: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      wakeRef.current = undefined;
      resolve(value);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener('abort', onAbort);
    wakeRef.current = () => done(true);
  });
}

/** Resolves once the tab is visible (polling stops while nobody looks). */
function visible(signal: AbortSignal): Promise<void> {
  if (!document.hidden) return Promise.resolve();
  return new Promise((resolve) => {
    const check = () => {
      if (document.hidden && !signal.aborted) return;
      document.removeEventListener('visibilitychange', check);
      resolve();
    };
    document.addEventListener('visibilitychange', check);
    signal.addEventListener('abort', check);
  });
}

/**
 * Reads `load` now and again every `intervalMs` (a function of the last data
 * may choose), while the tab is visible; slower when the API key's rate limit
 * runs low, and after a 429 for as long as the service asks. `deps` changing
 * starts over.
 */
export function usePoll<T>(
  load: (signal: AbortSignal) => Promise<T>,
  intervalMs: number | ((data: T | undefined) => number),
  deps: readonly unknown[],
): Polled<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean; updatedAt?: number }>({ loading: true });
  const wake = useRef<(() => void) | undefined>(undefined);
  /** A refresh asked for while a read was under way: read again as soon as it ends. */
  const again = useRef(false);
  const loadRef = useRef(load);
  loadRef.current = load;
  const intervalRef = useRef(intervalMs);
  intervalRef.current = intervalMs;

  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    setState({ loading: true });
    void (async () => {
      let data: T | undefined;
      while (!signal.aborted) {
        await visible(signal);
        if (signal.aborted) break;
        let wait: number;
        try {
          data = await loadRef.current(signal);
          if (signal.aborted) break;
          setState({ data, loading: false, updatedAt: Date.now() });
          const interval = intervalRef.current;
          wait = typeof interval === 'function' ? interval(data) : interval;
          if (budget.remaining < budget.limit * 0.2) wait *= 4;
        } catch (error) {
          if (signal.aborted) break;
          const failure = error instanceof Error ? error : new Error(String(error));
          setState((previous) => ({ ...previous, error: failure, loading: false }));
          if (failure instanceof ApiError && failure.unauthorized) break;
          wait = failure instanceof ApiError && failure.status === 429 ? (failure.retryAfter ?? 30) * 1000 : 10_000;
          // Asked to hurry or not, a failure waits its turn.
          again.current = false;
        }
        if (again.current) {
          again.current = false;
          wait = 0;
        }
        if (!(await pause(wait, signal, wake))) break;
      }
    })();
    return () => controller.abort();
  }, deps);

  const refresh = useCallback(() => {
    if (wake.current) wake.current();
    else again.current = true;
  }, []);
  return { data: state.data, error: state.error, loading: state.loading, updatedAt: state.updatedAt, refresh };
}

/** The current time, ticking every `ms`: for "3 s ago" and elapsed times. */
export function useNow(ms = 1000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}
