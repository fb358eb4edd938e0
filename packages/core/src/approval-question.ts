/**
 * How an approval question reads in chat (docs/codex.md, "Approvals in chat";
 * issue 30, finding 4). A question is cut to stay under the platforms' message
 * limits, and a cut must never hide what is being approved: the part that
 * matters most comes first (the summary names a write grant before anything
 * else), a long text keeps its head AND its tail (a harmless prefix cannot push
 * `curl …|sh` out of view), and a question that was cut at all says so and
 * cannot be approved with one tap: only by typing the code it shows.
 */

export interface ApprovalQuestionText {
  kind: 'command' | 'file_change' | 'other';
  summary: string;
  detail?: string | null;
  /** Set when the question could not be shown whole: approving takes `/approve <code>`. */
  approveCode?: string | null;
}

const questionHeadings: Record<ApprovalQuestionText['kind'], string> = {
  command: 'Approval needed: run a command?',
  file_change: 'Approval needed: change files?',
  other: 'Approval needed:',
};

/** The most of `summary` and `detail` a question shows: with the rest it stays under Discord's 2,000 characters. */
const summaryLimit = 300;
const detailLimit = 1200;

/**
 * Codex keeps an "approve for session" grant in its child process only: an
 * idle close, an eviction, a crash or a turn on another worker ends it, and
 * Codex asks again (issue 29, defect 8; docs/codex.md says why we do not keep
 * it ourselves). The question says so, so the next ask is no surprise.
 */
export const approvalSessionNote = '"Approve for session" lasts until the agent process restarts (after a quiet spell, a restart or a move to another worker); then I ask again.';

/** True when the question cannot be shown whole: it then needs an approve code (and gets no approve buttons). */
export function approvalQuestionIsCut(question: Pick<ApprovalQuestionText, 'summary' | 'detail'>): boolean {
  return question.summary.length > summaryLimit || (question.detail ?? '').length > detailLimit;
}

/** The question as the user reads it: what, the command and its directory or the files, how to answer, and how long "for session" lasts. */
export function renderApprovalQuestion(question: ApprovalQuestionText): string {
  const code = question.approveCode;
  const howToAnswer = code
    ? [
        `This request is too long to show whole: part of it is left out above (an operator sees it whole in the admin API). To approve it anyway, type /approve ${code} (or /approve session ${code}); /deny or the button declines.`,
      ]
    : ['Reply /approve, /approve session or /deny (the buttons do the same).'];
  return [...describeQuestion(question), '', ...howToAnswer, approvalSessionNote].join('\n');
}

/** The question once answered (its buttons removed): what was asked, then the outcome line. */
export function renderAnsweredQuestion(question: ApprovalQuestionText, outcome: string): string {
  return [...describeQuestion(question), '', outcome].join('\n');
}

function describeQuestion(question: ApprovalQuestionText): string[] {
  const detail = question.detail ? keepHeadAndTail(question.detail, detailLimit) : undefined;
  return [questionHeadings[question.kind], keepHeadAndTail(question.summary, summaryLimit), ...(detail ? [detail] : [])];
}

/**
 * `text` whole when it fits, else its head and its tail around a marker that
 * says how much was left out: the end of a command is where a harmful step
 * hides behind a long harmless start.
 */
export function keepHeadAndTail(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const marker = ` […${text.length - limit} characters not shown…] `;
  const keep = Math.max(limit - marker.length, 2);
  const head = Math.ceil(keep / 2);
  return `${text.slice(0, head)}${marker}${text.slice(text.length - (keep - head))}`;
}

/** A 6-digit code to type for approving a cut question; `randomInt` from node:crypto in the caller keeps this pure. */
export function formatApproveCode(n: number): string {
  return String(Math.abs(Math.trunc(n)) % 1_000_000).padStart(6, '0');
}
