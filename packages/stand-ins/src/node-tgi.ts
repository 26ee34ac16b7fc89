import type { Request, Response } from 'express';
import { Router } from 'express';
import { countTextTokens, splitIntoTokens } from '@gateway/tokenizer';
import { answerText } from './answer.js';
import { StandInHttpError } from './errors.js';
import { MAX_EMBEDDING_DIMENSIONS, MAX_GENERATED_TOKENS, MAX_STOP_SEQUENCES } from './limits.js';
import { embeddingInputs, embeddingTokens, unitVector } from './node-media.js';
import type { StandInNodeSettings } from './node-settings.js';
import { runSteps } from './pacing.js';
import { planGeneration, tgiFinishReason, tokenDetails, type Plan } from './plan.js';
import { endSse, openSse, writeEvent } from './sse.js';
import { exchangeOf } from './traffic.js';
import {
  optionalBoolean,
  optionalInteger,
  optionalObject,
  requireObject,
  stopSequences,
  type Body,
} from './validate.js';

/*
 * Text Generation Inference (TGI) routes of the stand-in model node: POST /generate,
 * POST /generate_stream, GET /info, and TEI's POST /embed. As in TGI, `details` are only
 * returned when asked for, stop sequences stay in the generated text, and validation errors
 * are 422.
 */

const MAX_INPUT_CHARS = 4 * 1024 * 1024;

interface TgiRequest {
  inputs: string;
  promptTokens: number;
  plan: Plan;
  details: boolean;
  decoderInputDetails: boolean;
  returnFullText: boolean;
}

function invalid(message: string): StandInHttpError {
  return new StandInHttpError(422, message);
}

const isSet = (value: unknown) => value !== undefined && value !== null;

/** TGI's checks, in its own words. */
function checkParameters(parameters: Body): void {
  const maxNewTokens = parameters.max_new_tokens;
  if (isSet(maxNewTokens) && !(Number.isInteger(maxNewTokens) && (maxNewTokens as number) > 0)) {
    throw invalid('`max_new_tokens` must be strictly positive');
  }
  if (isSet(parameters.temperature) && !((parameters.temperature as number) > 0)) {
    throw invalid('`temperature` must be strictly positive');
  }
  const stop = parameters.stop;
  if (Array.isArray(stop) && stop.length > MAX_STOP_SEQUENCES) {
    throw invalid(
      `\`stop\` supports up to ${MAX_STOP_SEQUENCES} stop sequences. Given: ${stop.length}`,
    );
  }
}

/** New tokens allowed: what was asked, within the context window and the generation cap. */
function newTokenBudget(promptTokens: number, asked: number | undefined, maxModelLen: number) {
  if (promptTokens + (asked ?? 0) > maxModelLen || promptTokens >= maxModelLen) {
    throw invalid(
      `\`inputs\` tokens + \`max_new_tokens\` must be <= ${maxModelLen}. ` +
        `Given: ${promptTokens} \`inputs\` tokens and ${asked ?? 0} \`max_new_tokens\``,
    );
  }
  return Math.min(asked ?? maxModelLen - promptTokens, MAX_GENERATED_TOKENS);
}

function readTgiRequest(body: unknown, settings: StandInNodeSettings): TgiRequest {
  const request = requireObject(body);
  const inputs = request.inputs;
  if (typeof inputs !== 'string' || inputs.length === 0) throw invalid('`inputs` cannot be empty');
  if (inputs.length > MAX_INPUT_CHARS) throw invalid('`inputs` is too long');
  const parameters = optionalObject(request, 'parameters') ?? {};
  checkParameters(parameters);
  const stop = stopSequences(parameters, 'stop', MAX_STOP_SEQUENCES);
  const promptTokens = countTextTokens(inputs);
  const asked = optionalInteger(parameters, 'max_new_tokens', 1, Number.MAX_SAFE_INTEGER);
  const maxTokens = newTokenBudget(promptTokens, asked, settings.maxModelLen);
  const answer = answerText(inputs, settings);
  return {
    inputs,
    promptTokens,
    plan: planGeneration({ answer, prefix: '', maxTokens, stop, keepStop: true }),
    details: optionalBoolean(parameters, 'details') ?? false,
    decoderInputDetails: optionalBoolean(parameters, 'decoder_input_details') ?? false,
    returnFullText: optionalBoolean(parameters, 'return_full_text') ?? false,
  };
}

function generatedText(request: TgiRequest): string {
  const text = request.plan.pieces.join('');
  return request.returnFullText ? request.inputs + text : text;
}

function generatedToken(piece: string) {
  return { ...tokenDetails(piece), special: false };
}

/** The prompt's tokens; TGI gives the first one no log-probability. */
function prefill(inputs: string) {
  return splitIntoTokens(inputs).map((piece, index) => {
    const token = tokenDetails(piece);
    return { id: token.id, text: piece, logprob: index === 0 ? null : token.logprob };
  });
}

async function generate(settings: () => StandInNodeSettings, req: Request, res: Response) {
  const request = readTgiRequest(req.body, settings());
  const exchange = exchangeOf(res);
  const { plan } = request;
  const stepTokens = () => 1;
  if (!(await runSteps(exchange, settings, plan.pieces.length, stepTokens))) return;
  exchange.tokensSent = exchange.tokensGenerated;
  const answer: Record<string, unknown> = { generated_text: generatedText(request) };
  if (request.details || request.decoderInputDetails) {
    answer.details = {
      finish_reason: tgiFinishReason(plan.finishReason),
      generated_tokens: plan.generatedTokens,
      seed: null,
      prefill: request.decoderInputDetails ? prefill(request.inputs) : [],
      tokens: plan.pieces.map(generatedToken),
      top_tokens: [],
    };
  }
  res.setHeader('x-prompt-tokens', String(request.promptTokens));
  res.setHeader('x-generated-tokens', String(plan.generatedTokens));
  res.json(answer);
}

async function generateStream(settings: () => StandInNodeSettings, req: Request, res: Response) {
  const request = readTgiRequest(req.body, settings());
  if (request.decoderInputDetails) {
    throw invalid('`decoder_input_details` == true is not supported when streaming tokens');
  }
  const exchange = exchangeOf(res);
  const { plan } = request;
  const last = plan.pieces.length - 1;
  openSse(res);
  const completed = await runSteps(exchange, settings, plan.pieces.length, (step) => {
    const piece = plan.pieces[step] ?? '';
    const final = step === last;
    const details = {
      finish_reason: tgiFinishReason(plan.finishReason),
      generated_tokens: plan.generatedTokens,
      seed: null,
      input_length: request.promptTokens,
    };
    writeEvent(res, {
      index: step + 1,
      token: generatedToken(piece),
      generated_text: final ? generatedText(request) : null,
      details: final && request.details ? details : null,
      top_tokens: null,
    });
    exchange.tokensSent += 1;
    return 1;
  });
  if (completed) endSse(res, false);
}

/** TEI's /embed (what TGI-style deployments serve embeddings with): a bare list of vectors. */
function embed(settings: StandInNodeSettings, req: Request, res: Response) {
  const body = requireObject(req.body);
  const inputs = embeddingInputs(body.inputs);
  const dimensions = optionalInteger(body, 'dimensions', 1, MAX_EMBEDDING_DIMENSIONS);
  const tokens = embeddingTokens(inputs).reduce((sum, count) => sum + count, 0);
  res.setHeader('x-compute-tokens', String(tokens));
  res.setHeader('x-prompt-tokens', String(tokens));
  res.json(inputs.map((input) => unitVector(input, dimensions ?? settings.embeddingDimensions)));
}

function info(settings: StandInNodeSettings) {
  return {
    model_id: settings.models?.[0] ?? 'stand-in-model',
    model_sha: null,
    model_dtype: 'torch.float16',
    model_device_type: 'stand-in',
    model_pipeline_tag: 'text-generation',
    max_concurrent_requests: 128,
    max_best_of: 1,
    max_stop_sequences: MAX_STOP_SEQUENCES,
    max_input_tokens: settings.maxModelLen - 1,
    max_total_tokens: settings.maxModelLen,
    router: 'text-generation-router',
    version: '0.0.0-stand-in',
    sha: null,
    docker_label: null,
  };
}

export function tgiRoutes(settings: () => StandInNodeSettings): Router {
  const router = Router();
  router.post('/generate', (req, res) => generate(settings, req, res));
  router.post('/generate_stream', (req, res) => generateStream(settings, req, res));
  router.post('/embed', (req, res) => embed(settings(), req, res));
  router.get('/info', (_req, res) => void res.json(info(settings())));
  return router;
}
