import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';

/**
 * The fake's turns, chosen by the last line of the turn's text (the runtime
 * puts carried history and notes before the user's words): docs/codex.md,
 * "The fake app-server". Each script speaks the protocol the way Codex does:
 * item/started, deltas, server requests, item/completed.
 */

/** What a script can do on the wire during its turn. */
export interface FakeTurnContext {
  threadId: string;
  turnId: string;
  cwd: string;
  signal: AbortSignal;
  /** Commands approved "for session" on this thread: not asked again. */
  sessionApproved: Set<string>;
  /** The thread's developer instructions, as it was loaded with (`show-instructions` says them). */
  developerInstructions?: string;
  /** The turn's approvalPolicy is `never`: commands run without asking. */
  neverAsk?: boolean;
  notify(method: string, params: Record<string, unknown>): void;
  /** A request to the client: its answer, or 'aborted' when the turn was interrupted first. */
  request(method: string, params: Record<string, unknown>): Promise<ClientAnswer | 'aborted'>;
  /** The thread's next `thread/resume` (in any fake process) is answered only after `ms`. */
  delayNextResume(ms: number): void;
  exit(code: number): void;
}

export interface ClientAnswer {
  result?: unknown;
  error?: { code?: number; message?: string };
}

export type FakeTurnEnd = { status: 'completed' } | { status: 'interrupted' } | { status: 'failed'; message: string };

export async function runFakeScript(context: FakeTurnContext, text: string): Promise<FakeTurnEnd> {
  const line = (text.trim().split('\n').pop() ?? '').trim();
  const [head, ...rest] = line.split(':');
  const argument = rest.join(':').trim();
  switch (head) {
    case 'run':
      return runCommand(context, argument, {});
    case 'legacy-run':
      return runCommand(context, argument, { legacy: true });
    case 'sh':
      return runCommand(context, argument, { shell: true });
    case 'edit':
      return editFile(context, argument, false);
    case 'legacy-edit':
      return editFile(context, argument, true);
    case 'ask-user':
      return askUserInput(context);
    case 'hang':
    case 'hang-deaf':
      return hang(context);
    case 'die':
      context.exit(3);
      return hang(context);
    case 'fail':
      context.notify('error', { threadId: context.threadId, turnId: context.turnId, willRetry: false, error: { message: 'fake upstream failure', codexErrorInfo: 'other' } });
      return { status: 'failed', message: 'fake upstream failure' };
    case 'flaky':
      context.notify('error', { threadId: context.threadId, turnId: context.turnId, willRetry: true, error: { message: 'fake stream dropped, retrying' } });
      return say(context, 'codex: answered after a retry');
    case 'slow':
      return saySlowly(context, `codex: ${argument} `.repeat(40));
    case 'unknown':
      return sendUnknowns(context);
    case 'legacy-run-abandoned':
      return abandonLegacyQuestion(context, argument);
    case 'show-instructions':
      return say(context, `codex: instructions: ${context.developerInstructions ?? ''}`);
    case 'delay-resume':
      context.delayNextResume(Number(argument) || 0);
      return say(context, `codex: the next resume of this thread waits ${Number(argument) || 0} ms`);
    default:
      return say(context, `codex: ${line}`);
  }
}

/** An agent message streamed as up to three deltas. */
export async function say(context: FakeTurnContext, text: string, extra: Record<string, unknown> = {}): Promise<FakeTurnEnd> {
  if (context.signal.aborted) return { status: 'interrupted' };
  const item = { type: 'agentMessage', id: itemId(), text: '', ...extra };
  context.notify('item/started', { threadId: context.threadId, turnId: context.turnId, item, startedAtMs: Date.now() });
  const third = Math.ceil(text.length / 3) || 1;
  for (let start = 0; start < text.length; start += third) {
    context.notify('item/agentMessage/delta', { threadId: context.threadId, turnId: context.turnId, itemId: item.id, delta: text.slice(start, start + third) });
  }
  context.notify('item/completed', { threadId: context.threadId, turnId: context.turnId, item: { ...item, text }, completedAtMs: Date.now() });
  return { status: 'completed' };
}

/** An agent message streamed in 20 deltas 150 ms apart (about 3 s): a slow answer for streamed replies; stops when interrupted. */
async function saySlowly(context: FakeTurnContext, text: string): Promise<FakeTurnEnd> {
  const item = { type: 'agentMessage', id: itemId(), text: '' };
  context.notify('item/started', { threadId: context.threadId, turnId: context.turnId, item, startedAtMs: Date.now() });
  const piece = Math.ceil(text.length / 20);
  for (let start = 0; start < text.length; start += piece) {
    if (context.signal.aborted) return { status: 'interrupted' };
    context.notify('item/agentMessage/delta', { threadId: context.threadId, turnId: context.turnId, itemId: item.id, delta: text.slice(start, start + piece) });
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  context.notify('item/completed', { threadId: context.threadId, turnId: context.turnId, item: { ...item, text }, completedAtMs: Date.now() });
  return { status: 'completed' };
}

type Decision = 'accept' | 'acceptForSession' | 'decline' | 'cancel';

/** Both vocabularies, and anything else (an error, a bad answer) as decline: fail closed like Codex. */
function decisionOf(answer: ClientAnswer): Decision {
  const decision = (answer.result as { decision?: unknown } | undefined)?.decision;
  if (decision === 'accept' || decision === 'approved') return 'accept';
  if (decision === 'acceptForSession' || decision === 'approved_for_session' || decision === 'approvedForSession') return 'acceptForSession';
  if (decision === 'cancel' || decision === 'abort') return 'cancel';
  return 'decline';
}

/** `legacy`: asked with the older vocabulary; `shell`: really run with /bin/sh in the thread's cwd, as Codex would. */
interface RunOptions {
  legacy?: boolean;
  shell?: boolean;
}

async function runCommand(context: FakeTurnContext, command: string, { legacy = false, shell = false }: RunOptions): Promise<FakeTurnEnd> {
  const { threadId, turnId, cwd } = context;
  const item = { type: 'commandExecution', id: itemId(), command, cwd, processId: null, status: 'inProgress', commandActions: [{ type: 'unknown', command }], aggregatedOutput: null, exitCode: null, durationMs: null };
  context.notify('item/started', { threadId, turnId, item, startedAtMs: Date.now() });
  let decision: Decision = 'accept';
  if (!context.sessionApproved.has(command) && !context.neverAsk) {
    const reason = 'the fake wants to run a command';
    const answer = legacy
      ? await context.request('execCommandApproval', { conversationId: threadId, callId: item.id, approvalId: null, command: ['bash', '-lc', command], cwd, reason, parsedCmd: [] })
      : await context.request('item/commandExecution/requestApproval', { threadId, turnId, itemId: item.id, approvalId: null, reason, command, cwd, commandActions: [], startedAtMs: Date.now() });
    // Interrupted while asking: the item never completes (the client must finish the call itself).
    if (answer === 'aborted') return { status: 'interrupted' };
    decision = decisionOf(answer);
  }
  if (decision === 'acceptForSession') context.sessionApproved.add(command);
  const ran = decision === 'accept' || decision === 'acceptForSession';
  // `env` prints this process's environment, as the real command would print the child's: what a chat user can read (issue 30, finding 1).
  const { output, exitCode } = !ran ? { output: '', exitCode: 0 } : shell ? await runShell(command, cwd) : { output: command === 'env' ? renderEnv() : `ran ${command}\n`, exitCode: 0 };
  const status = exitCode === 0 ? 'completed' : 'failed';
  const completed = ran ? { ...item, status, aggregatedOutput: output, exitCode, durationMs: 1 } : { ...item, status: 'declined' };
  context.notify('item/completed', { threadId, turnId, item: completed, completedAtMs: Date.now() });
  if (decision === 'cancel') return { status: 'interrupted' };
  if (ran && shell) return say(context, `codex: ran ${command} (exit ${exitCode})\n${output}`);
  if (ran && command === 'env') return say(context, `codex: ran env\n${output}`);
  return say(context, ran ? `codex: ran ${command}` : `codex: ${command} was declined`);
}

async function editFile(context: FakeTurnContext, path: string, legacy: boolean): Promise<FakeTurnEnd> {
  const { threadId, turnId } = context;
  const diff = '@@ -1 +1 @@\n-old\n+new\n';
  const item = { type: 'fileChange', id: itemId(), changes: [{ path, kind: { type: 'update', move_path: null }, diff }], status: 'inProgress' };
  context.notify('item/started', { threadId, turnId, item, startedAtMs: Date.now() });
  const reason = 'the fake wants to edit a file';
  const answer = legacy
    ? await context.request('applyPatchApproval', { conversationId: threadId, callId: item.id, fileChanges: { [path]: { type: 'update', unified_diff: diff, move_path: null } }, reason, grantRoot: null })
    : await context.request('item/fileChange/requestApproval', { threadId, turnId, itemId: item.id, reason, grantRoot: null, startedAtMs: Date.now() });
  if (answer === 'aborted') return { status: 'interrupted' };
  const decision = decisionOf(answer);
  const applied = decision === 'accept' || decision === 'acceptForSession';
  context.notify('item/completed', { threadId, turnId, item: { ...item, status: applied ? 'completed' : 'declined' }, completedAtMs: Date.now() });
  context.notify('turn/diff/updated', { threadId, turnId, diff: applied ? diff : '' });
  if (decision === 'cancel') return { status: 'interrupted' };
  return say(context, applied ? `codex: edited ${path}` : `codex: the edit of ${path} was declined`);
}

async function askUserInput(context: FakeTurnContext): Promise<FakeTurnEnd> {
  const answer = await context.request('item/tool/requestUserInput', {
    threadId: context.threadId,
    turnId: context.turnId,
    itemId: itemId(),
    questions: [{ id: 'q1', header: 'Pick', question: 'Which one?', options: null }],
  });
  if (answer === 'aborted') return { status: 'interrupted' };
  const refused = answer.error?.code === -32601;
  return say(context, refused ? 'codex: requestUserInput was refused (-32601), going on' : 'codex: got an answer to requestUserInput');
}

/**
 * `execCommandApproval`, then the turn fails without waiting for the answer: a
 * Codex whose turn ended while an older-vocabulary question was still open
 * (the client then settles the question after the turn, issue 29 defect 8).
 */
function abandonLegacyQuestion(context: FakeTurnContext, command: string): FakeTurnEnd {
  const { threadId, cwd } = context;
  void context.request('execCommandApproval', { conversationId: threadId, callId: itemId(), approvalId: null, command: ['bash', '-lc', command], cwd, reason: 'the fake wants to run a command', parsedCmd: [] });
  context.notify('error', { threadId, turnId: context.turnId, willRetry: false, error: { message: 'the fake gave up on its question', codexErrorInfo: 'other' } });
  return { status: 'failed', message: 'the fake gave up on its question' };
}

function hang(context: FakeTurnContext): Promise<FakeTurnEnd> {
  return new Promise((resolve) => {
    if (context.signal.aborted) resolve({ status: 'interrupted' });
    context.signal.addEventListener('abort', () => resolve({ status: 'interrupted' }), { once: true });
  });
}

async function sendUnknowns(context: FakeTurnContext): Promise<FakeTurnEnd> {
  const { threadId, turnId } = context;
  context.notify('fake/somethingNew', { threadId, surprise: { nested: [1, 2, 3] } });
  const mystery = { type: 'mysteryItem', id: itemId(), payload: { whatever: true } };
  context.notify('item/started', { threadId, turnId, item: mystery, startedAtMs: Date.now(), brandNewField: 'x' });
  context.notify('item/completed', { threadId, turnId, item: mystery, completedAtMs: Date.now(), brandNewField: 'x' });
  context.notify('thread/tokenUsage/updated', { threadId, turnId, tokenUsage: { total: { totalTokens: 7 } } });
  return say(context, 'codex: unknown things ignored', { phase: 'final', extraField: { nested: true } });
}

/** The command's output (stdout, then stderr) and exit code, as Codex runs a command: a shell in the thread's cwd, bounded in time. */
function runShell(command: string, cwd: string): Promise<{ output: string; exitCode: number }> {
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', command], { cwd, timeout: 10_000, maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      const exitCode = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ output: `${stdout}${stderr}`, exitCode });
    });
  });
}

function renderEnv(): string {
  return `${Object.entries(process.env)
    .map(([name, value]) => `${name}=${value ?? ''}`)
    .sort()
    .join('\n')}\n`;
}

function itemId(): string {
  return `item_${randomUUID().slice(0, 8)}`;
}
