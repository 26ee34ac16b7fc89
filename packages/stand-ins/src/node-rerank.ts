import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import { Router } from 'express';
import { countTextTokens } from '@gateway/tokenizer';
import { badRequest } from './errors.js';
import { MAX_RERANK_DOCUMENTS } from './limits.js';
import { answerDelay } from './node-media.js';
import { servedModel } from './node-generation.js';
import type { StandInNodeSettings } from './node-settings.js';
import { optionalBoolean, optionalInteger, requireObject, requireString } from './validate.js';

/*
 * POST /v1/rerank (Cohere-style, as vLLM and TEI serve it). The score is the cosine of the
 * query's and the document's word sets: deterministic, and ranks overlapping text first.
 */

/** Cohere bills one search unit per query with up to this many documents. */
const DOCUMENTS_PER_SEARCH_UNIT = 100;

function words(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
}

export function overlapScore(query: string, document: string): number {
  const a = words(query);
  const b = words(document);
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const word of a) if (b.has(word)) shared += 1;
  return Math.round((shared / Math.sqrt(a.size * b.size)) * 1e6) / 1e6;
}

function documentTexts(value: unknown): string[] {
  const valid =
    Array.isArray(value) &&
    value.length > 0 &&
    value.length <= MAX_RERANK_DOCUMENTS &&
    value.every(
      (d) => typeof d === 'string' || typeof (d as { text?: unknown } | null)?.text === 'string',
    );
  if (!valid) {
    throw badRequest(
      `'documents' must hold 1 to ${MAX_RERANK_DOCUMENTS} strings or {text} objects.`,
      'documents',
      'invalid_value',
    );
  }
  return (value as unknown[]).map((d) =>
    typeof d === 'string' ? d : (d as { text: string }).text,
  );
}

async function rerank(settings: () => StandInNodeSettings, req: Request, res: Response) {
  const body = requireObject(req.body);
  const model = servedModel(body, settings());
  const query = requireString(body, 'query', 32_000);
  const documents = documentTexts(body.documents);
  const topN = optionalInteger(body, 'top_n', 1, documents.length) ?? documents.length;
  const returnDocuments = optionalBoolean(body, 'return_documents') ?? false;
  if (!(await answerDelay(settings, res))) return;
  const ranked = documents
    .map((text, index) => ({ index, relevance_score: overlapScore(query, text), text }))
    .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
    .slice(0, topN)
    .map(({ index, relevance_score, text }) =>
      returnDocuments ? { index, relevance_score, document: { text } } : { index, relevance_score },
    );
  const queryTokens = countTextTokens(query);
  // Each (query, document) pair is one forward pass of a cross-encoder.
  const totalTokens = documents.reduce((sum, d) => sum + queryTokens + countTextTokens(d), 0);
  res.json({
    id: `rerank-standin-${randomUUID()}`,
    model,
    results: ranked,
    meta: {
      api_version: { version: '2' },
      billed_units: { search_units: Math.ceil(documents.length / DOCUMENTS_PER_SEARCH_UNIT) },
    },
    usage: { prompt_tokens: totalTokens, total_tokens: totalTokens },
  });
}

export function rerankRoutes(settings: () => StandInNodeSettings): Router {
  const router = Router();
  router.post('/v1/rerank', (req, res) => rerank(settings, req, res));
  return router;
}
