import type { FastifyInstance } from 'fastify';
import { SimError } from './errors.ts';

/**
 * Replaces Fastify's parsers with lenient ones: the Bot API is called with
 * JSON, form-urlencoded or multipart bodies (Telegram Bot API, "Making requests"), grammY posts
 * parameterless methods as an empty JSON body, and a malformed body must end in
 * a clear 400, never a crash.
 */
export function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();

  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (error) {
      done(new SimError('SIM_BAD_JSON', `body is not valid JSON: ${(error as Error).message}`), undefined);
    }
  });

  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(String(body))));
  });

  app.addContentTypeParser('multipart/form-data', { parseAs: 'buffer' }, (request, body, done) => {
    parseMultipart(body as Buffer, String(request.headers['content-type'])).then(
      (fields) => done(null, fields),
      (error: unknown) => done(new SimError('SIM_BAD_MULTIPART', `body is not valid multipart: ${(error as Error).message}`), undefined),
    );
  });

  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, body, done) => done(null, String(body)));

  // Anything else is read and dropped, so an odd content type still reaches the
  // handler and gets that endpoint's own, well-shaped error.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(null, undefined));
}

/** The file parts of a parsed multipart body, by field name (the transcription endpoint reads them). */
const multipartFiles = new WeakMap<object, Map<string, { name: string; bytes: Buffer }>>();

export function multipartFilesOf(body: unknown): Map<string, { name: string; bytes: Buffer }> | undefined {
  return typeof body === 'object' && body !== null ? multipartFiles.get(body) : undefined;
}

// A file part stays a `[file name]` field for the Bot API's handlers; its bytes are kept aside for the ones that read them.
async function parseMultipart(body: Buffer, contentType: string): Promise<Record<string, string>> {
  const form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  const fields: Record<string, string> = {};
  const files = new Map<string, { name: string; bytes: Buffer }>();
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') {
      fields[name] = value;
      continue;
    }
    fields[name] = `[file ${value.name}]`;
    files.set(name, { name: value.name, bytes: Buffer.from(await value.arrayBuffer()) });
  }
  multipartFiles.set(fields, files);
  return fields;
}
