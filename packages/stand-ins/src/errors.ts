import type { Request, Response } from 'express';

/*
 * Errors the stand-ins answer with, in the shape of the server they imitate: OpenAI-like
 * `{error: {message, type, param, code}}`, or TGI's `{error, error_type}` on TGI routes.
 */

export class StandInHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
    readonly type: string = 'invalid_request_error',
  ) {
    super(message);
  }
}

export function badRequest(
  message: string,
  param: string | null = null,
  code: string | null = null,
) {
  return new StandInHttpError(400, message, param, code);
}

const TGI_PATHS = new Set(['/generate', '/generate_stream', '/info', '/embed']);

export function isTgiPath(path: string): boolean {
  return TGI_PATHS.has(path);
}

function tgiErrorType(status: number): string {
  if (status === 422 || status === 400) return 'validation';
  if (status === 429) return 'overloaded';
  return 'generation';
}

/** Writes the error in the protocol of the request's path; TGI reports validation as 422. */
export function sendError(req: Request, res: Response, error: StandInHttpError): void {
  if (isTgiPath(req.path)) {
    const status = error.status === 400 ? 422 : error.status;
    res.status(status).json({ error: error.message, error_type: tgiErrorType(status) });
    return;
  }
  res.status(error.status).json({
    error: { message: error.message, type: error.type, param: error.param, code: error.code },
  });
}

/** Maps body-parser failures and unexpected errors; a started response is cut instead. */
export function toHttpError(error: unknown): StandInHttpError {
  if (error instanceof StandInHttpError) return error;
  const type = (error as { type?: unknown }).type;
  if (type === 'entity.too.large') {
    return new StandInHttpError(413, 'Request body is larger than the stand-in accepts.');
  }
  if (type === 'entity.parse.failed') {
    return badRequest('We could not parse the JSON body of your request.');
  }
  const status = (error as { status?: unknown }).status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new StandInHttpError(status, (error as Error).message);
  }
  const message = error instanceof Error ? error.message : String(error);
  return new StandInHttpError(
    500,
    `stand-in internal error: ${message}`,
    null,
    null,
    'server_error',
  );
}
