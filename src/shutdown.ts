/**
 * Runs `stop` on the first SIGINT or SIGTERM and exits with its outcome. A
 * second signal while stopping exits at once: the operator means it.
 */
export function stopOnSignals(stop: () => Promise<void>, write: (line: string) => void = console.error): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      write(`${signal} again: exiting now`);
      process.exit(130);
    }
    stopping = true;
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        write(`shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
