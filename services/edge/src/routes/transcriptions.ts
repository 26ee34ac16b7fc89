import { createHash } from 'node:crypto';
import express, { type Request, type RequestHandler, type Router } from 'express';
import multer from 'multer';
import { bodyIdleTimeout, checkJsonValue } from '@gateway/runtime';
import {
  GatewayError,
  PUBLIC_ROUTES,
  TranscriptionRequestSchema,
  type TranscriptionRequest,
} from '@gateway/contracts';
import { estimateTextTokens } from '@gateway/tokenizer';
import type { EdgeDeps } from '../deps.js';
import { credentialRequired } from '../http/auth.js';
import { sendJson } from '../http/send-answer.js';
import { mountPublicRoute, refuseOtherMethods } from '../http/public-route.js';
import { modelBodyValidator } from './model-body.js';
import { inferenceHandler } from './inference-flow.js';
import { serviceBlock } from './service-block.js';
import { mediaPlan, type MediaRoute } from './media.js';
import { omit } from '../jobs/inference-jobs.js';

const TEXT_FORMATS = new Set(['text', 'srt', 'vtt']);

const route: MediaRoute<TranscriptionRequest> = {
  endpoint: 'transcription',
  kind: 'transcription',
  jobIdPrefix: 'stt',
  validate: modelBodyValidator(TranscriptionRequestSchema),
  inputTokens: (r) => estimateTextTokens([r.prompt ?? '']),
  maxOutputTokens: null,
};

/**
 * `POST /v1/audio/transcriptions`: a multipart upload (`file` + text fields), size-limited
 * because the audio travels base64-encoded inside the job message.
 */
export function transcriptionsRouter(deps: EdgeDeps): Router {
  const router = express.Router();
  const credential = credentialRequired(deps.authFailures);
  const contract = PUBLIC_ROUTES.transcriptions;
  mountPublicRoute(
    router,
    contract,
    [credential],
    upload(deps.limits.uploadBytes, contract.upload.file),
    inferenceHandler<TranscriptionRequest>(deps, {
      validate: (_body, req) => route.validate(fields(req)),
      plan: (request, req) => {
        const file = uploaded(req);
        return mediaPlan(route, request, {
          ...omit(request, 'model'),
          file: {
            base64: file.buffer.toString('base64'),
            filename: file.originalname,
            contentType: file.mimetype,
          },
        });
      },
      fingerprint: (req) => {
        const file = req.file;
        const digest = file ? createHash('sha256').update(file.buffer).digest('hex') : null;
        return { fields: fields(req), file: digest, filename: file?.originalname };
      },
      answer: async (res, final, guard) => {
        const data = (final.data ?? {}) as { text?: unknown };
        const format = fields(res.req).response_format;
        if (
          typeof format === 'string' &&
          TEXT_FORMATS.has(format) &&
          typeof data.text === 'string'
        ) {
          await guard?.complete({
            status: 200,
            contentType: 'text/plain; charset=utf-8',
            body: data.text,
            encoding: 'utf8',
          });
          res.status(200).type('text/plain').send(data.text);
          return;
        }
        await sendJson(res, 200, { ...final.data, _service: serviceBlock(final) }, guard);
      },
    }),
  );
  refuseOtherMethods(router, contract.path, [credential]);
  return router;
}

/** Takes the multipart upload: its one file part `file`, and the text fields. */
function upload(fileSizeBytes: number, file: string): RequestHandler {
  const single = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: fileSizeBytes, files: 1, fields: 16, fieldSize: 64 * 1024, parts: 17 },
  }).single(file);
  const idle = bodyIdleTimeout();
  return (req, res, next) => {
    if (!req.is('multipart/form-data')) {
      next(new GatewayError('unsupported_media_type', 'Request body must be multipart/form-data'));
      return;
    }
    idle(req, res, () => {
      single(req, res, (error?: unknown) => {
        if (error) {
          next(uploadError(error));
          return;
        }
        try {
          // Text fields obey the rules of JSON bodies (no NUL, no unpaired surrogate).
          checkJsonValue(req.body);
          next();
        } catch (refusal) {
          next(refusal);
        }
      });
    });
  };
}

function uploadError(error: unknown): GatewayError {
  if (error instanceof multer.MulterError) {
    if (error.code === 'LIMIT_FILE_SIZE') {
      return new GatewayError('payload_too_large', 'The uploaded file is too large', {
        param: 'file',
      });
    }
    const param = error.field ?? undefined;
    return new GatewayError(
      'invalid_request_body',
      `multipart upload refused: ${error.message}`,
      param ? { param } : {},
    );
  }
  return new GatewayError('invalid_request_body', 'multipart body is malformed');
}

/** The text fields, numbers parsed (multipart carries strings only). */
function fields(req: Request): Record<string, unknown> {
  const raw = { ...((req.body ?? {}) as Record<string, unknown>) };
  if (typeof raw.temperature === 'string' && raw.temperature.trim() !== '') {
    const value = Number(raw.temperature);
    if (Number.isFinite(value)) raw.temperature = value;
  }
  return raw;
}

function uploaded(req: Request): Express.Multer.File {
  if (!req.file) {
    throw new GatewayError('invalid_request_body', 'file is required', { param: 'file' });
  }
  return req.file;
}
