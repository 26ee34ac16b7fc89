import express from 'express';
import type { StandInFault } from './faults.js';
import { JSON_BODY_LIMIT_BYTES, MULTIPART_BODY_LIMIT_BYTES } from './limits.js';
import { audioRoutes } from './node-audio.js';
import { chatRoutes } from './node-chat.js';
import { fileRoutes, mediaRoutes } from './node-media.js';
import { rerankRoutes } from './node-rerank.js';
import { DEFAULT_NODE_SETTINGS, mergeSettings, type StandInNodeSettings } from './node-settings.js';
import { tgiRoutes } from './node-tgi.js';
import { createStandInKit, faultMiddleware, finishApp, listenLoopback } from './server-kit.js';
import type { MarkedCalls, RecordedRequest, StandInStats } from './traffic.js';
import { nowS } from './sse.js';

/*
 * A stand-in for a model server (vLLM / llama.cpp OpenAI-compatible API and TGI's API in one
 * process), for the gateway's tests, local mode and benchmarks. Not a model: answers are
 * deterministic text, but latency, streaming, errors and usage behave like a real server's.
 */

export interface StandInModelNodeOptions extends Partial<StandInNodeSettings> {
  /** Loopback address to bind; default 127.0.0.1. */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
}

export interface StandInModelNode {
  url: string;
  port: number;
  /** Stops listening and cuts every open connection. */
  close(): Promise<void>;
  setFault(fault: StandInFault): void;
  clearFault(): void;
  stats(): StandInStats;
  requests(): RecordedRequest[];
  clearRequests(): void;
  /** Model calls per `[[req:<id>]]` marker found in request bodies (started, completed). */
  markedCalls(): Record<string, MarkedCalls>;
  /** Changes behaviour while running (latency, pace, answer length, served models). */
  setOptions(update: Partial<StandInNodeSettings>): void;
}

/** Routes where a drop-mid-stream fault cuts after some tokens rather than at once. */
const GENERATION_PATHS = new Set([
  '/v1/chat/completions',
  '/v1/completions',
  '/generate',
  '/generate_stream',
]);

function modelList(settings: StandInNodeSettings) {
  const ids = settings.models ?? ['stand-in-model'];
  const data = ids.map((id) => ({
    id,
    object: 'model',
    created: nowS(),
    owned_by: 'stand-in',
    max_model_len: settings.maxModelLen,
  }));
  return { object: 'list', data };
}

export async function createStandInModelNode(
  options: StandInModelNodeOptions = {},
): Promise<StandInModelNode> {
  const { host = '127.0.0.1', port = 0, ...initial } = options;
  let settings = mergeSettings(DEFAULT_NODE_SETTINGS, initial);
  const current = () => settings;
  const { app, traffic, faults } = createStandInKit('stand-in-node');

  app.use(traffic.watch);
  app.get('/health', (_req, res) => void res.status(faults.healthy() ? 200 : 503).end());
  app.use(fileRoutes());
  app.use(express.json({ limit: JSON_BODY_LIMIT_BYTES }));
  app.use(
    '/v1/audio/transcriptions',
    express.raw({ type: 'multipart/form-data', limit: MULTIPART_BODY_LIMIT_BYTES }),
  );
  app.use(traffic.record);
  app.use(faultMiddleware(faults, GENERATION_PATHS));
  app.get('/v1/models', (_req, res) => void res.json(modelList(settings)));
  app.use(chatRoutes(current));
  app.use(tgiRoutes(current));
  app.use(mediaRoutes(current));
  app.use(audioRoutes(current));
  app.use(rerankRoutes(current));
  finishApp(app);

  const listening = await listenLoopback(app, host, port);
  return {
    url: listening.url,
    port: listening.port,
    close: listening.close,
    setFault: (fault) => faults.set(fault),
    clearFault: () => faults.clear(),
    stats: () => traffic.stats(),
    requests: () => traffic.requests(),
    clearRequests: () => traffic.clearRequests(),
    markedCalls: () => traffic.markedCalls(),
    setOptions: (update) => {
      settings = mergeSettings(settings, update);
    },
  };
}
