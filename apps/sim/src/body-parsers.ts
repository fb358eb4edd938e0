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

// Files are not emulated; their field names are kept so a handler can say so.
async function parseMultipart(body: Buffer, contentType: string): Promise<Record<string, string>> {
  const form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  const fields: Record<string, string> = {};
  for (const [name, value] of form.entries()) fields[name] = typeof value === 'string' ? value : `[file ${value.name}]`;
  return fields;
}
