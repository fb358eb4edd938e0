import type { ZodError } from 'zod';

/**
 * An error raised by the simulator's own control surface (not by an emulated
 * platform, whose errors keep that platform's wire shape). `code` is stable so
 * tests and the demo can branch on it.
 */
export class SimError extends Error {
  readonly code: string;
  readonly statusCode: number;

  constructor(code: string, message: string, statusCode = 400) {
    super(message);
    this.name = 'SimError';
    this.code = code;
    this.statusCode = statusCode;
  }
}

/** One line naming each bad field, so a caller sees every problem at once. */
export function describeZodError(error: ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'body'}: ${issue.message}`)
    .join('; ');
}

/** Whatever was thrown, as the (statusCode, code, message) triple every error renderer needs. */
export function classifyError(error: unknown): { statusCode: number; code: string; message: string } {
  if (error instanceof SimError) return { statusCode: error.statusCode, code: error.code, message: error.message };
  const candidate = error as { statusCode?: unknown; code?: unknown; message?: unknown } | null;
  const statusCode =
    typeof candidate?.statusCode === 'number' && candidate.statusCode >= 400 && candidate.statusCode < 600 ? candidate.statusCode : 500;
  const code = typeof candidate?.code === 'string' ? candidate.code : statusCode < 500 ? 'SIM_BAD_REQUEST' : 'SIM_INTERNAL';
  const message = typeof candidate?.message === 'string' ? candidate.message : String(error);
  return { statusCode, code, message };
}
