import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { CalculatorError, allowedFunctions } from './calculator-expression.ts';

// Why a thread: mathjs runs synchronously, so an expression that loops or allocates
// would block or kill the worker process's own event loop (heartbeats, every other
// turn). A worker thread has its own heap with `resourceLimits`, and the parent's
// timer can `terminate()` it however busy it is.
//
// The thread's code is plain JavaScript run with `eval: true` rather than a .ts file:
// a .ts entry needs the tsx loader in the thread, which the process may or may not
// have registered (tsx in dev, vitest's own transform in tests), and loading it costs
// startup time. mathjs is found by the parent and passed by path, so resolution does
// not depend on the thread's working directory.
const threadSource = String.raw`
const { parentPort, workerData } = require('node:worker_threads');
const { create, all } = require(workerData.mathjsPath);
// A private instance per thread, locked as mathjs's security page describes: nothing
// can define units, import functions or re-enter the parser, even past the allowlist.
const math = create(all);
const parse = math.parse;
const disabled = (name) => () => { throw new Error(name + ' is disabled'); };
math.import({
  import: disabled('import'), createUnit: disabled('createUnit'), evaluate: disabled('evaluate'),
  parse: disabled('parse'), simplify: disabled('simplify'), derivative: disabled('derivative'),
  compile: disabled('compile'), resolve: disabled('resolve'), reviver: disabled('reviver'),
}, { override: true });
parentPort.on('message', ({ expression, maxChars }) => {
  try {
    // A fresh scope each call: no variable survives into the next conversation's call.
    const value = parse(expression).compile().evaluate(new Map());
    const text = typeof value === 'function' ? '' : math.format(value, { precision: 14 });
    if (!text) parentPort.postMessage({ ok: false, code: 'CALC_FAILED', message: 'expression did not produce a value' });
    else if (text.length > maxChars) parentPort.postMessage({ ok: false, code: 'CALC_FAILED', message: 'result is longer than ' + maxChars + ' characters' });
    else parentPort.postMessage({ ok: true, text });
  } catch (error) {
    parentPort.postMessage({ ok: false, code: 'CALC_FAILED', message: String(error && error.message || error) });
  }
});
// mathjs builds functions and the unit table lazily, on first use; doing that here, before
// "ready", keeps it out of the first call's time limit.
for (const name of workerData.warm) void math[name];
parse('sin(pi / 4) + sqrt(2) * 3! > 1 ? 5 km to m : 1 m').compile().evaluate(new Map());
parentPort.postMessage({ ready: true });
`;

export interface CalculatorLimits {
  /** Wall-clock time one evaluation may take once a thread has it. */
  timeoutMs: number;
  /** Old-generation heap of each thread, in MB. */
  maxHeapMb: number;
  maxResultChars: number;
  /** Threads kept at most; calls beyond wait in a queue. */
  threads: number;
}

export const defaultCalculatorLimits: CalculatorLimits = { timeoutMs: 2_000, maxHeapMb: 64, maxResultChars: 1_000, threads: 2 };

type Reply = { ready: true } | { ok: true; text: string } | { ok: false; code: 'CALC_FAILED'; message: string };

interface Job {
  expression: string;
  resolve(text: string): void;
  reject(error: Error): void;
}

const startTimeoutMs = 15_000;
const ignoreError = (): void => undefined;
const mathjsPath = createRequire(import.meta.url).resolve('mathjs');

/** Evaluates checked expressions in a few long-lived, limited threads; a thread that overruns is terminated and replaced. */
export class CalculatorPool {
  private readonly idle: Promise<Worker>[] = [];
  private readonly queue: Job[] = [];
  private threads = 0;

  constructor(private readonly limits: CalculatorLimits = defaultCalculatorLimits) {}

  evaluate(expression: string): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      this.queue.push({ expression, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.queue.length > 0) {
      let thread = this.idle.pop();
      if (!thread && this.threads < this.limits.threads) thread = this.spawn();
      if (!thread) return;
      void this.run(thread, this.queue.shift()!);
    }
  }

  private spawn(): Promise<Worker> {
    this.threads++;
    const worker = new Worker(threadSource, {
      eval: true,
      workerData: { mathjsPath, warm: [...allowedFunctions] },
      // No inherited `--import tsx`: the thread runs plain JavaScript and starts faster without it.
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: this.limits.maxHeapMb, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
    });
    // The process's other work keeps it alive; an idle calculator thread must not.
    worker.unref();
    let timer: NodeJS.Timeout | undefined;
    let onReady = (): void => undefined;
    let onFail = (_error: Error): void => undefined;
    let onExit = (): void => undefined;
    return new Promise<Worker>((resolve, reject) => {
      // Loading mathjs takes about a second; a thread that never reports ready must not hang the turn.
      timer = setTimeout(() => {
        void worker.terminate();
        reject(new CalculatorError('CALC_FAILED', 'calculator thread did not start'));
      }, startTimeoutMs);
      onReady = () => resolve(worker);
      onFail = reject;
      onExit = () => reject(new CalculatorError('CALC_FAILED', 'calculator thread exited while starting'));
      worker.once('message', onReady).once('error', onFail).once('exit', onExit);
    }).finally(() => {
      clearTimeout(timer);
      // Only our own listeners: Worker keeps internal ones that removeAllListeners would break.
      worker.off('message', onReady).off('error', onFail).off('exit', onExit);
      // An 'error' with no listener would crash this process; one may still come from a
      // thread being terminated after its call was given up, so a sink stays for good.
      worker.on('error', ignoreError);
    });
  }

  private async run(thread: Promise<Worker>, job: Job): Promise<void> {
    let worker: Worker;
    try {
      worker = await thread;
    } catch (error) {
      this.threads--;
      job.reject(error instanceof CalculatorError ? error : new CalculatorError('CALC_FAILED', `calculator unavailable: ${(error as Error).message}`));
      return this.pump();
    }
    try {
      const outcome = await this.ask(worker, job.expression);
      this.idle.push(Promise.resolve(worker));
      if (typeof outcome === 'string') job.resolve(outcome);
      else job.reject(outcome);
    } catch (error) {
      this.threads--;
      void worker.terminate();
      job.reject(error as Error);
    }
    this.pump();
  }

  /**
   * One evaluation on `worker`: the result text, or the error the expression raised (the
   * thread is still sound). Rejects, and the caller discards the thread, on timeout, memory or exit.
   */
  private ask(worker: Worker, expression: string): Promise<string | CalculatorError> {
    return new Promise<string | CalculatorError>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      };
      const timer = setTimeout(() => {
        done();
        reject(new CalculatorError('CALC_TIMEOUT', `took longer than ${this.limits.timeoutMs} ms and was stopped`));
      }, this.limits.timeoutMs);
      const onMessage = (reply: Reply): void => {
        if ('ready' in reply) return;
        done();
        resolve(reply.ok ? reply.text : new CalculatorError(reply.code, reply.message));
      };
      const onError = (error: Error & { code?: string }): void => {
        done();
        const memory = error.code === 'ERR_WORKER_OUT_OF_MEMORY';
        reject(new CalculatorError(memory ? 'CALC_MEMORY' : 'CALC_FAILED', memory ? `needed more than ${this.limits.maxHeapMb} MB and was stopped` : error.message));
      };
      const onExit = (): void => {
        done();
        reject(new CalculatorError('CALC_FAILED', 'calculator thread exited'));
      };
      worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      worker.postMessage({ expression, maxChars: this.limits.maxResultChars });
    });
  }
}
