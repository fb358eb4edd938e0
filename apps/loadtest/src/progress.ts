import cliProgress from 'cli-progress';

export interface ProgressView {
  turnDone(): void;
  error(): void;
  stop(): void;
}

/**
 * Turns done, turns/s over the last few seconds, errors. Off when stderr is
 * not a terminal (CI, tests, a log file), where a redrawn line is only noise.
 */
export function createProgressView(enabled: boolean, totalTurns: number | undefined): ProgressView {
  if (!enabled || !process.stderr.isTTY) return { turnDone: () => undefined, error: () => undefined, stop: () => undefined };
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: totalTurns
        ? 'turns {bar} {value}/{total} | {rate} turns/s | errors {errors} | {elapsed}s'
        : 'turns {value} | {rate} turns/s | errors {errors} | {elapsed}s',
      hideCursor: true,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  const startedAt = Date.now();
  // Completion times of the last few seconds: the rate shown is current, not the run's average.
  const recent: number[] = [];
  let done = 0;
  let errors = 0;
  const payload = () => {
    const now = Date.now();
    while (recent.length > 0 && (recent[0] as number) < now - 3000) recent.shift();
    const window = Math.min(3, (now - startedAt) / 1000) || 1;
    return { rate: (recent.length / window).toFixed(1), errors, elapsed: ((now - startedAt) / 1000).toFixed(0) };
  };
  bar.start(totalTurns ?? 0, 0, payload());
  const ticker = setInterval(() => bar.update(done, payload()), 500);
  ticker.unref();
  return {
    turnDone() {
      done += 1;
      recent.push(Date.now());
    },
    error() {
      errors += 1;
    },
    stop() {
      clearInterval(ticker);
      bar.update(done, payload());
      bar.stop();
    },
  };
}
