import { randomUUID } from 'node:crypto';
import express, { type Response, type Router } from 'express';
import {
  EmbeddingsRequestSchema,
  ImagesRequestSchema,
  PUBLIC_ROUTES,
  RerankRequestSchema,
  SpeechRequestSchema,
  VideoRequestSchema,
  type EmbeddingsRequest,
  type ImagesRequest,
  type InferenceEndpoint,
  type ModelKind,
  type PublicRoute,
  type RerankRequest,
  type SpeechRequest,
  type VideoRequest,
} from '@gateway/contracts';
import { estimateTextTokens } from '@gateway/tokenizer';
import type { EdgeDeps } from '../deps.js';
import { jsonBody } from '../http/context.js';
import { credentialRequired } from '../http/auth.js';
import { mountPublicRoute, refuseOtherMethods } from '../http/public-route.js';
import { sendBytes, sendJson } from '../http/send-answer.js';
import type { IdempotencyGuard } from '../http/idempotency.js';
import type { JobReply } from '../jobs/job-replies.js';
import { modelBodyValidator } from './model-body.js';
import { inferenceHandler, type InferencePlan } from './inference-flow.js';
import { serviceBlock } from './service-block.js';
import { omit } from '../jobs/inference-jobs.js';

/** How one default-models-only JSON route maps to a job. */
export interface MediaRoute<T extends { model: string }> {
  endpoint: InferenceEndpoint;
  kind: ModelKind;
  jobIdPrefix: string;
  validate(body: unknown): T;
  /** Prompt tokens of the hold estimate. */
  inputTokens(request: T): Promise<number>;
  /** Output cap: 0 where nothing is generated per token; null = the model's cap. */
  maxOutputTokens: number | null;
  choices?(request: T): number;
}

export async function mediaPlan<T extends { model: string }>(
  route: MediaRoute<T>,
  request: T,
  forWorker: Record<string, unknown>,
): Promise<InferencePlan> {
  return {
    endpoint: route.endpoint,
    jobId: `${route.jobIdPrefix}-${randomUUID()}`,
    model: request.model,
    estimate: {
      inputTokens: await route.inputTokens(request),
      maxOutputTokens: route.maxOutputTokens,
      choices: route.choices?.(request) ?? 1,
    },
    priority: false,
    stream: false,
    request: forWorker,
    providers: ['node'],
    kinds: [route.kind],
  };
}

const tokens = (texts: readonly string[]) => estimateTextTokens(texts);

export const embeddingsRoute: MediaRoute<EmbeddingsRequest> = {
  endpoint: 'embeddings',
  kind: 'embedding',
  jobIdPrefix: 'emb',
  validate: modelBodyValidator(EmbeddingsRequestSchema),
  inputTokens: (r) => tokens(typeof r.input === 'string' ? [r.input] : r.input),
  maxOutputTokens: 0,
};
export const imagesRoute: MediaRoute<ImagesRequest> = {
  endpoint: 'images',
  kind: 'image',
  jobIdPrefix: 'img',
  validate: modelBodyValidator(ImagesRequestSchema),
  inputTokens: (r) => tokens([r.prompt]),
  maxOutputTokens: null,
  choices: (r) => r.n ?? 1,
};
export const speechRoute: MediaRoute<SpeechRequest> = {
  endpoint: 'speech',
  kind: 'speech',
  jobIdPrefix: 'tts',
  validate: modelBodyValidator(SpeechRequestSchema),
  inputTokens: (r) => tokens([r.input]),
  maxOutputTokens: null,
};
export const videoRoute: MediaRoute<VideoRequest> = {
  endpoint: 'video',
  kind: 'video',
  jobIdPrefix: 'vid',
  validate: modelBodyValidator(VideoRequestSchema),
  inputTokens: (r) => tokens([r.prompt]),
  maxOutputTokens: null,
};
export const rerankRoute: MediaRoute<RerankRequest> = {
  endpoint: 'rerank',
  kind: 'rerank',
  jobIdPrefix: 'rrk',
  validate: modelBodyValidator(RerankRequestSchema),
  inputTokens: (r) => tokens([r.query, ...r.documents]),
  maxOutputTokens: 0,
};

/** JSON answers carry `_service` (cost and balance) like chat completions. */
const jsonAnswer = (res: Response, final: JobReply, guard: IdempotencyGuard | null) =>
  sendJson(res, 200, { ...final.data, _service: serviceBlock(final) }, guard);

/** Speech answers with the audio bytes; the cost travels in headers. */
async function audioAnswer(res: Response, final: JobReply, guard: IdempotencyGuard | null) {
  const data = (final.data ?? {}) as { audio_base64?: unknown; content_type?: unknown };
  const service = serviceBlock(final);
  if (service.cost_dzd !== undefined) res.set('X-Service-Cost-Dzd', String(service.cost_dzd));
  res.set('X-Service-Hold-Id', service.hold_id);
  if (service.balance_dzd !== undefined) {
    res.set('X-Service-Balance-Dzd', String(service.balance_dzd));
  }
  const contentType = typeof data.content_type === 'string' ? data.content_type : 'audio/mpeg';
  const audio = Buffer.from(
    typeof data.audio_base64 === 'string' ? data.audio_base64 : '',
    'base64',
  );
  await sendBytes(res, contentType, audio, guard);
}

/** `POST /v1/embeddings`, `/v1/images/generations`, `/v1/audio/speech`, `/v1/video/generations`, `/v1/rerank`. */
export function mediaRouter(deps: EdgeDeps): Router {
  const router = express.Router();
  const credential = credentialRequired(deps.authFailures);
  const mount = <T extends { model: string }>(
    contract: PublicRoute,
    route: MediaRoute<T>,
    answer = jsonAnswer,
  ) => {
    mountPublicRoute(
      router,
      contract,
      [credential],
      ...jsonBody(deps.limits.jsonBodyBytes),
      inferenceHandler<T>(deps, {
        validate: (body) => route.validate(body),
        plan: (request) => mediaPlan(route, request, omit(request, 'model')),
        answer,
      }),
    );
    refuseOtherMethods(router, contract.path, [credential]);
  };
  mount(PUBLIC_ROUTES.embeddings, embeddingsRoute);
  mount(PUBLIC_ROUTES.images, imagesRoute);
  mount(PUBLIC_ROUTES.speech, speechRoute, audioAnswer);
  mount(PUBLIC_ROUTES.video, videoRoute);
  mount(PUBLIC_ROUTES.rerank, rerankRoute);
  return router;
}
