import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import { Router } from 'express';
import { countTextTokens } from '@gateway/tokenizer';
import { hash32, seededRandom } from './answer.js';
import { badRequest } from './errors.js';
import {
  MAX_EMBEDDING_DIMENSIONS,
  MAX_EMBEDDING_INPUT_TOKENS,
  MAX_EMBEDDING_INPUTS,
  MAX_IMAGES,
  MAX_VIDEO_SECONDS,
} from './limits.js';
import { standInPng, standInVideo } from './media-bytes.js';
import { servedModel } from './node-generation.js';
import type { StandInNodeSettings } from './node-settings.js';
import { waitMs } from './pacing.js';
import { nowS } from './sse.js';
import { exchangeOf } from './traffic.js';
import { optionalInteger, optionalString, requireObject, requireString } from './validate.js';

/* Embeddings, image and video generation of the stand-in model node, plus the file route. */

type Settings = () => StandInNodeSettings;

/** Non-text answers still take time: the first-token latency, cut short by a disconnect. */
export async function answerDelay(settings: Settings, res: Response): Promise<boolean> {
  return waitMs(settings().firstTokenLatencyMs, exchangeOf(res).signal);
}

export function unitVector(text: string, dimensions: number): number[] {
  const random = seededRandom(hash32(`embedding:${text}`));
  const raw = Array.from({ length: dimensions }, () => random() * 2 - 1);
  const norm = Math.sqrt(raw.reduce((sum, x) => sum + x * x, 0)) || 1;
  return raw.map((x) => x / norm);
}

export function embeddingInputs(value: unknown): string[] {
  const inputs = typeof value === 'string' ? [value] : value;
  const valid =
    Array.isArray(inputs) &&
    inputs.length > 0 &&
    inputs.length <= MAX_EMBEDDING_INPUTS &&
    inputs.every((item) => typeof item === 'string' && item.length > 0);
  if (!valid) {
    throw badRequest(
      `'$.input' must be a non-empty string or 1 to ${MAX_EMBEDDING_INPUTS} non-empty strings.`,
      'input',
      'invalid_value',
    );
  }
  return inputs as string[];
}

/** Token count of each input, refusing one longer than an embedding model's context. */
export function embeddingTokens(inputs: readonly string[]): number[] {
  const tokens = inputs.map((input) => countTextTokens(input));
  if (tokens.some((count) => count > MAX_EMBEDDING_INPUT_TOKENS)) {
    throw badRequest(
      `This model's maximum context length is ${MAX_EMBEDDING_INPUT_TOKENS} tokens.`,
      'input',
      'context_length_exceeded',
    );
  }
  return tokens;
}

async function embeddings(settings: Settings, req: Request, res: Response) {
  const body = requireObject(req.body);
  const model = servedModel(body, settings());
  const inputs = embeddingInputs(body.input);
  const dimensions =
    optionalInteger(body, 'dimensions', 1, MAX_EMBEDDING_DIMENSIONS) ??
    settings().embeddingDimensions;
  const format = optionalString(body, 'encoding_format', 16) ?? 'float';
  if (format !== 'float' && format !== 'base64') {
    throw badRequest(
      "Invalid 'encoding_format': expected 'float' or 'base64'.",
      'encoding_format',
      'invalid_value',
    );
  }
  const tokens = embeddingTokens(inputs);
  if (!(await answerDelay(settings, res))) return;
  const data = inputs.map((input, index) => {
    const vector = unitVector(input, dimensions);
    const embedding =
      format === 'base64'
        ? Buffer.from(new Float32Array(vector).buffer).toString('base64')
        : vector;
    return { object: 'embedding', index, embedding };
  });
  const promptTokens = tokens.reduce((sum, count) => sum + count, 0);
  res.json({
    object: 'list',
    data,
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  });
}

/** Output tokens of one 1024x1024 image per quality, as image models bill them. */
const IMAGE_TOKENS_BY_QUALITY: Record<string, number> = {
  low: 272,
  medium: 1056,
  standard: 1056,
  auto: 1056,
  high: 4160,
  hd: 4160,
};
const SIZE_PATTERN = /^(\d{2,4})x(\d{2,4})$/;

function imageTokens(size: string, quality: string): number {
  const [, width = '1024', height = '1024'] = SIZE_PATTERN.exec(size) ?? [];
  const base = IMAGE_TOKENS_BY_QUALITY[quality] ?? 1056;
  return Math.round((base * Number(width) * Number(height)) / (1024 * 1024));
}

function origin(req: Request): string {
  return `${req.protocol}://${req.get('host') ?? '127.0.0.1'}`;
}

async function images(settings: Settings, req: Request, res: Response) {
  const body = requireObject(req.body);
  const model = servedModel(body, settings());
  const prompt = requireString(body, 'prompt', 32_000);
  const n = optionalInteger(body, 'n', 1, MAX_IMAGES) ?? 1;
  const size = optionalString(body, 'size', 16) ?? '1024x1024';
  const quality = optionalString(body, 'quality', 16) ?? 'auto';
  const format = optionalString(body, 'response_format', 16) ?? 'b64_json';
  if (size !== 'auto' && !SIZE_PATTERN.test(size))
    throw badRequest(`Invalid 'size': '${size}'.`, 'size', 'invalid_value');
  if (!(quality in IMAGE_TOKENS_BY_QUALITY))
    throw badRequest(`Invalid 'quality': '${quality}'.`, 'quality', 'invalid_value');
  if (format !== 'b64_json' && format !== 'url')
    throw badRequest(`Invalid 'response_format': '${format}'.`, 'response_format', 'invalid_value');
  if (!(await answerDelay(settings, res))) return;
  const data = Array.from({ length: n }, (_, index) => {
    const seed = hash32(`image:${model}:${prompt}:${index}`).toString(16);
    return format === 'url'
      ? { url: `${origin(req)}/_stand-in/files/${seed}.png` }
      : { b64_json: standInPng(seed).toString('base64') };
  });
  const inputTokens = countTextTokens(prompt);
  const outputTokens = n * imageTokens(size, quality);
  res.json({
    created: nowS(),
    data,
    usage: {
      input_tokens: inputTokens,
      output_tokens: outputTokens,
      total_tokens: inputTokens + outputTokens,
      input_tokens_details: { text_tokens: inputTokens, image_tokens: 0 },
    },
  });
}

/** Billable video tokens per generated second (a stand-in figure). */
export const VIDEO_TOKENS_PER_SECOND = 1_000;

async function video(settings: Settings, req: Request, res: Response) {
  const body = requireObject(req.body);
  const model = servedModel(body, settings());
  const prompt = requireString(body, 'prompt', 32_000);
  // Some APIs send seconds as a string ("4"); accept both.
  const asNumber = typeof body.seconds === 'string' ? { seconds: Number(body.seconds) } : body;
  const seconds = optionalInteger(asNumber, 'seconds', 1, MAX_VIDEO_SECONDS) ?? 4;
  const size = optionalString(body, 'size', 16) ?? '1280x720';
  if (!SIZE_PATTERN.test(size))
    throw badRequest(`Invalid 'size': '${size}'.`, 'size', 'invalid_value');
  if (!(await answerDelay(settings, res))) return;
  const seed = hash32(`video:${model}:${prompt}:${seconds}:${size}`).toString(16);
  const inputTokens = countTextTokens(prompt);
  const outputTokens = seconds * VIDEO_TOKENS_PER_SECOND;
  res.json({
    id: `video_standin_${randomUUID()}`,
    object: 'video',
    status: 'completed',
    created_at: nowS(),
    completed_at: nowS(),
    model,
    progress: 100,
    seconds,
    size,
    url: `${origin(req)}/_stand-in/files/${seed}.mp4`,
    usage: {
      input_tokens: inputTokens,
      output_tokens: outputTokens,
      total_tokens: inputTokens + outputTokens,
      seconds,
    },
  });
}

/** Serves the files that image and video answers link to; content depends on the name only. */
function file(req: Request, res: Response) {
  const match = /^([0-9a-f]{1,8})\.(png|mp4)$/.exec(String(req.params.name));
  if (match === null) {
    res.status(404).json({
      error: {
        message: 'No such stand-in file.',
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
    return;
  }
  const [, seed = '', extension] = match;
  res.type(extension === 'png' ? 'image/png' : 'video/mp4');
  res.send(extension === 'png' ? standInPng(seed) : standInVideo(seed));
}

export function mediaRoutes(settings: Settings): Router {
  const router = Router();
  router.post('/v1/embeddings', (req, res) => embeddings(settings, req, res));
  router.post('/v1/images/generations', (req, res) => images(settings, req, res));
  router.post('/v1/video/generations', (req, res) => video(settings, req, res));
  return router;
}

export function fileRoutes(): Router {
  const router = Router();
  router.get('/_stand-in/files/:name', file);
  return router;
}
