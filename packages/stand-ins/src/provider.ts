import { timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import express from 'express';
import { StandInHttpError, sendError } from './errors.js';
import type { StandInFault } from './faults.js';
import { JSON_BODY_LIMIT_BYTES, MAX_ANSWER_TOKENS } from './limits.js';
import { providerChat, type ProviderBehaviour } from './provider-chat.js';
import type { StandInProviderModel } from './provider-validate.js';
import { createStandInKit, faultMiddleware, finishApp, listenLoopback } from './server-kit.js';
import { nowS } from './sse.js';
import type { RecordedRequest, StandInStats } from './traffic.js';

/*
 * A stand-in for the external OpenAI-like provider of reasoning models (o-series-like), for the
 * gateway's tests of its allowlist and translation: it is as strict as the real API, needs a
 * Bearer key, and records every request so tests can assert what was sent upstream.
 */

export interface StandInProviderOptions {
  apiKey: string;
  models: StandInProviderModel[];
  host?: string;
  port?: number;
  firstTokenLatencyMs?: number;
  tokensPerSecond?: number;
  answerTokensMin?: number;
  answerTokensMax?: number;
}

export interface StandInProvider {
  url: string;
  port: number;
  close(): Promise<void>;
  /** Every request as received (authorization redacted), oldest first, bounded. */
  requests(): RecordedRequest[];
  clearRequests(): void;
  setFault(fault: StandInFault): void;
  clearFault(): void;
  stats(): StandInStats;
}

function behaviourOf(options: StandInProviderOptions): ProviderBehaviour {
  const behaviour = {
    models: options.models.map((model) => ({ ...model })),
    firstTokenLatencyMs: options.firstTokenLatencyMs ?? 20,
    tokensPerSecond: options.tokensPerSecond ?? 500,
    answerTokensMin: options.answerTokensMin ?? 30,
    answerTokensMax: options.answerTokensMax ?? 60,
  };
  const integers = [
    behaviour.firstTokenLatencyMs,
    behaviour.tokensPerSecond,
    behaviour.answerTokensMin,
  ];
  if (!integers.every((value) => Number.isInteger(value) && value >= 0)) {
    throw new Error(
      'stand-in provider: latency, pace and answer length must be non-negative integers',
    );
  }
  const { answerTokensMin: min, answerTokensMax: max } = behaviour;
  if (min < 1 || !Number.isInteger(max) || max < min || max > MAX_ANSWER_TOKENS) {
    throw new Error(
      `stand-in provider: answer length must satisfy 1 <= min <= max <= ${MAX_ANSWER_TOKENS}`,
    );
  }
  if (options.apiKey.length === 0 || behaviour.models.length === 0) {
    throw new Error('stand-in provider: apiKey and at least one model are required');
  }
  return behaviour;
}

function sameKey(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** OpenAI's answers to a missing or wrong key; the key itself is never echoed. */
function requireKey(apiKey: string) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer (.+)$/.exec(header);
    if (match === null) {
      const message =
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).";
      sendError(req, res, new StandInHttpError(401, message));
      return;
    }
    if (!sameKey(match[1] ?? '', apiKey)) {
      sendError(
        req,
        res,
        new StandInHttpError(401, 'Incorrect API key provided.', null, 'invalid_api_key'),
      );
      return;
    }
    next();
  };
}

export async function createStandInProvider(
  options: StandInProviderOptions,
): Promise<StandInProvider> {
  const behaviour = behaviourOf(options);
  const current = () => behaviour;
  const { app, traffic, faults } = createStandInKit('stand-in-provider');
  app.use(traffic.watch);
  app.use(express.json({ limit: JSON_BODY_LIMIT_BYTES }));
  app.use(traffic.record);
  app.use(requireKey(options.apiKey));
  app.use(faultMiddleware(faults, new Set(['/v1/chat/completions'])));
  app.get('/v1/models', (_req, res) => {
    const data = behaviour.models.map(({ id }) => ({
      id,
      object: 'model',
      created: nowS(),
      owned_by: 'stand-in',
    }));
    res.json({ object: 'list', data });
  });
  app.post('/v1/chat/completions', (req, res) => providerChat(current, req, res));
  finishApp(app);
  const listening = await listenLoopback(app, options.host ?? '127.0.0.1', options.port ?? 0);
  return {
    url: listening.url,
    port: listening.port,
    close: listening.close,
    requests: () => traffic.requests(),
    clearRequests: () => traffic.clearRequests(),
    setFault: (fault) => faults.set(fault),
    clearFault: () => faults.clear(),
    stats: () => traffic.stats(),
  };
}
