/**
 * Files users send (photos, documents, voice): what each kind becomes for the
 * model, and the short replies for the ones it never sees (docs/media.md).
 * Pure rules; fetching and transcribing happen in the worker.
 */

/** What an attachment is, as the platform's parser tells it. */
export type AttachmentKind = 'image' | 'document' | 'audio';

/**
 * A file of an inbound message, stored as a reference (inbound_events.attachments):
 * never its bytes. `ref` is what the platform's API fetches it by: a Telegram
 * file_id, a Slack file id, a Discord attachment URL.
 */
export interface InboundAttachment {
  kind: AttachmentKind;
  ref: string;
  mime: string | null;
  name: string | null;
  /** Bytes, as the platform announced them (null: not announced). */
  size: number | null;
  /** sha256 (hex) of the fetched bytes, written by the worker once it fetched them. */
  sha256?: string;
}

/** How an attachment reaches the model, or why it does not. */
export type AttachmentPlan =
  | { kind: 'image' }
  | { kind: 'text' }
  | { kind: 'transcribe' }
  | { kind: 'refuse'; reason: 'too_large' | 'unsupported' | 'voice_off' };

/** Text-like files by MIME type: their bytes are read as UTF-8 text. */
const textMimes = new Set(['application/json', 'application/xml', 'application/x-yaml', 'application/yaml', 'application/javascript', 'application/x-sh', 'application/sql', 'application/csv']);
/** Text-like files by name, for platforms that send `application/octet-stream` for source code. */
const textExtensions = new Set([
  'txt', 'md', 'markdown', 'csv', 'tsv', 'json', 'yaml', 'yml', 'xml', 'toml', 'ini', 'log', 'sql', 'sh', 'py', 'js', 'mjs', 'cjs', 'ts', 'tsx', 'jsx',
  'java', 'kt', 'go', 'rs', 'c', 'h', 'cpp', 'hpp', 'cs', 'rb', 'php', 'swift', 'css', 'scss', 'html', 'htm', 'rst', 'tex',
]);
/** Image types the chat-completions API reads (OpenAI vision: PNG, JPEG, WEBP, non-animated GIF). */
const imageMimes = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif']);

/** Whether a document is text the model can read as is. */
export function isTextDocument(mime: string | null, name: string | null): boolean {
  const base = (mime ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? '';
  if (base.startsWith('text/') || textMimes.has(base)) return true;
  const extension = name?.includes('.') ? name.split('.').pop()?.toLowerCase() : undefined;
  return extension !== undefined && textExtensions.has(extension);
}

/**
 * What to do with one attachment before anything is fetched: its announced
 * size over `maxBytes` is refused without a download (the download is capped
 * again, for platforms that announce no size or announce it wrong).
 */
export function planAttachment(attachment: InboundAttachment, options: { maxBytes: number; transcription: boolean }): AttachmentPlan {
  if (attachment.size !== null && attachment.size > options.maxBytes) return { kind: 'refuse', reason: 'too_large' };
  if (attachment.kind === 'audio') return options.transcription ? { kind: 'transcribe' } : { kind: 'refuse', reason: 'voice_off' };
  if (attachment.kind === 'image') {
    const mime = (attachment.mime ?? 'image/jpeg').toLowerCase();
    return imageMimes.has(mime) ? { kind: 'image' } : { kind: 'refuse', reason: 'unsupported' };
  }
  if (attachment.mime?.toLowerCase().startsWith('image/') && imageMimes.has(attachment.mime.toLowerCase())) return { kind: 'image' };
  return isTextDocument(attachment.mime, attachment.name) ? { kind: 'text' } : { kind: 'refuse', reason: 'unsupported' };
}

/** The one short reply for a file the model never sees. */
export const mediaNotices = {
  too_large: 'That file is too large for me to read.',
  unsupported: 'I can read photos, text documents and voice messages, but not this kind of file.',
  voice_off: 'Voice messages are not supported here. Please type your message.',
  fetch_failed: 'I could not download your file. Please try sending it again.',
  not_hosted: 'I can only read files uploaded here, not links to files stored elsewhere.',
  over_budget: 'That is more than I can read at once. Please send fewer or smaller files.',
  transcribe_failed: 'I could not transcribe your voice message. Please try again or type it.',
} as const;

export type MediaNoticeReason = keyof typeof mediaNotices;

/** The first 12 hex digits of a hash: enough for a reader to match two mentions of one file. */
function shortHash(sha256: string): string {
  return sha256.slice(0, 12);
}

/**
 * An image as later history keeps it: the bytes go to the model only in the
 * turn the image arrives (docs/media.md, "What the transcript keeps").
 */
export function describeImage(name: string | null, sha256: string): string {
  return `[image: ${name ?? 'photo'}, sha256 ${shortHash(sha256)}]`;
}

/** A text document as the model reads it: its name, then its text. */
export function describeDocument(name: string | null, text: string): string {
  return `[file: ${name ?? 'document'}]\n${text}`;
}

/**
 * What one turn may read of its input's files (issue 30, finding 3): a turn
 * takes up to 32 events, each with several files, and before these limits
 * one user's burst of large documents held the worker's event loop for
 * seconds (decoding, then counting tokens), so peers declared it dead and
 * every other conversation on it was cut off.
 */
export interface MediaTurnBudget {
  /** Bytes of all files of the turn (MEDIA_TURN_MAX_BYTES). */
  maxBytes: number;
  /** Images of the turn (MEDIA_TURN_MAX_IMAGES): each is held as base64 for the request. */
  maxImages: number;
  /** Characters of one document's text the model is given (MEDIA_DOCUMENT_MAX_CHARS). */
  maxDocumentChars: number;
}

/** What the turn has read so far. */
export interface MediaTurnSpent {
  bytes: number;
  images: number;
}

/** Whether a file of `size` bytes (null: not announced yet) and kind still fits the turn's budget. */
export function fitsTurnBudget(spent: MediaTurnSpent, budget: MediaTurnBudget, file: { kind: 'image' | 'text' | 'transcribe'; size: number | null }): boolean {
  if (file.kind === 'image' && spent.images >= budget.maxImages) return false;
  return spent.bytes + (file.size ?? 0) <= budget.maxBytes;
}

/** A document's text cut to `maxChars`, with a line telling the model the rest was not read. */
export function cutDocumentText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  // Never split a surrogate pair: the cut text is stored, and a lone surrogate is text Postgres refuses.
  const end = /[\uD800-\uDBFF]/.test(text[maxChars - 1] ?? '') ? maxChars - 1 : maxChars;
  return `${text.slice(0, end)}\n[cut: the document is ${text.length} characters long; only the first ${end} were read]`;
}

/** A file a stopped turn did not get to read, as the transcript keeps it (the user's message stays in the history). */
export function describeUnreadFile(attachment: Pick<InboundAttachment, 'kind' | 'name'>): string {
  const label = attachment.kind === 'image' ? 'image' : attachment.kind === 'audio' ? 'voice' : 'file';
  return `[${label}: ${attachment.name ?? label}, not read]`;
}

/** A caption and what the files became, as one user message. */
export function joinUserText(caption: string, parts: readonly string[]): string {
  return [caption.trim(), ...parts].filter((part) => part !== '').join('\n\n');
}
