import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { Router } from 'express';
import { countTextTokens } from '@gateway/tokenizer';
import { answerText } from './answer.js';
import { badRequest } from './errors.js';
import { MAX_SPEECH_BYTES, MAX_SPEECH_INPUT_CHARS } from './limits.js';
import { AUDIO_CONTENT_TYPES, standInAudio } from './media-bytes.js';
import { answerDelay } from './node-media.js';
import { servedModel } from './node-generation.js';
import type { StandInNodeSettings } from './node-settings.js';
import { optionalNumber, optionalString, requireObject, requireString } from './validate.js';

/* Speech synthesis and transcription of the stand-in model node (OpenAI audio API shapes). */

type Settings = () => StandInNodeSettings;

/** Audio bytes per input token: longer text, longer audio. */
const SPEECH_BYTES_PER_TOKEN = 256;
/** Transcription bills audio as tokens: one per this many bytes of upload (a stand-in rate). */
const AUDIO_BYTES_PER_TOKEN = 1_000;
/** Nominal bitrate used to report an upload's duration. */
const AUDIO_BYTES_PER_SECOND = 16_000;
const TRANSCRIPT_LENGTH = { answerTokensMin: 8, answerTokensMax: 24 };

async function speech(settings: Settings, req: Request, res: Response) {
  const body = requireObject(req.body);
  const model = servedModel(body, settings());
  const input = requireString(body, 'input', MAX_SPEECH_INPUT_CHARS);
  const voice = requireString(body, 'voice', 64);
  const format = optionalString(body, 'response_format', 16) ?? 'mp3';
  const contentType = AUDIO_CONTENT_TYPES[format];
  if (contentType === undefined) {
    throw badRequest(`Invalid 'response_format': '${format}'.`, 'response_format', 'invalid_value');
  }
  const speed = optionalNumber(body, 'speed', 0.25, 4) ?? 1;
  if (!(await answerDelay(settings, res))) return;
  const tokens = countTextTokens(input);
  const bytes = Math.min(MAX_SPEECH_BYTES, Math.ceil((tokens * SPEECH_BYTES_PER_TOKEN) / speed));
  res.type(contentType);
  res.send(standInAudio(`speech:${model}:${voice}:${speed}:${input}`, format, bytes));
}

interface Upload {
  model: string;
  file: Blob;
  prompt: string;
  language: string | null;
  format: string;
}

async function readUpload(req: Request, settings: StandInNodeSettings): Promise<Upload> {
  const contentType = req.headers['content-type'] ?? '';
  if (!Buffer.isBuffer(req.body) || !contentType.startsWith('multipart/form-data')) {
    throw badRequest('Expected a multipart/form-data body with `file` and `model`.', 'file');
  }
  let form: FormData;
  try {
    form = await new Response(req.body, { headers: { 'content-type': contentType } }).formData();
  } catch {
    throw badRequest('Could not parse the multipart/form-data body.', 'file');
  }
  const fields: Record<string, unknown> = {};
  for (const name of ['model', 'prompt', 'language', 'response_format']) {
    const value = form.get(name);
    if (value !== null) fields[name] = typeof value === 'string' ? value : null;
  }
  const file = form.get('file');
  if (file === null || typeof file === 'string') {
    throw badRequest("Missing required parameter: 'file'.", 'file', 'missing_required_parameter');
  }
  return {
    model: servedModel(fields, settings),
    file,
    prompt: optionalString(fields, 'prompt', 8_192) ?? '',
    language: optionalString(fields, 'language', 16) ?? null,
    format: optionalString(fields, 'response_format', 16) ?? 'json',
  };
}

async function transcription(settings: Settings, req: Request, res: Response) {
  const upload = await readUpload(req, settings());
  if (!['json', 'text', 'verbose_json'].includes(upload.format)) {
    throw badRequest(
      `Invalid 'response_format': '${upload.format}'.`,
      'response_format',
      'invalid_value',
    );
  }
  const audio = Buffer.from(await upload.file.arrayBuffer());
  if (!(await answerDelay(settings, res))) return;
  const digest = createHash('sha256').update(audio).digest('hex');
  const text = answerText(`audio:${digest}`, TRANSCRIPT_LENGTH);
  const audioTokens = Math.max(1, Math.ceil(audio.length / AUDIO_BYTES_PER_TOKEN));
  const textTokens = countTextTokens(upload.prompt);
  const outputTokens = countTextTokens(text);
  if (upload.format === 'text') {
    res.type('text/plain').send(text);
    return;
  }
  const usage = {
    type: 'tokens',
    input_tokens: audioTokens + textTokens,
    input_token_details: { text_tokens: textTokens, audio_tokens: audioTokens },
    output_tokens: outputTokens,
    total_tokens: audioTokens + textTokens + outputTokens,
  };
  if (upload.format === 'json') {
    res.json({ text, usage });
    return;
  }
  const duration = audio.length / AUDIO_BYTES_PER_SECOND;
  res.json({
    task: 'transcribe',
    language: upload.language ?? 'english',
    duration,
    text,
    segments: [],
    usage,
  });
}

export function audioRoutes(settings: Settings): Router {
  const router = Router();
  router.post('/v1/audio/speech', (req, res) => speech(settings, req, res));
  router.post('/v1/audio/transcriptions', (req, res) => transcription(settings, req, res));
  return router;
}
