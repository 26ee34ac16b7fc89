/**
 * The zero-latency fake OpenAI-compatible upstream (run as its own process, so that its CPU is
 * not the load generator's): a fixed answer with a usage object, at once.
 *
 *   POST /v1/chat/completions  JSON, or SSE when `stream` is true: BENCH_STREAM_CHUNKS content
 *                              chunks BENCH_STREAM_GAP_MS apart (the first at once), then a
 *                              usage chunk and [DONE]
 *   POST /v1/completions       JSON whose text is the prompt itself: the webhook phase tags each
 *                              job's prompt and reads the tag back from the delivered body; each
 *                              answer is logged as {"msg":"answered","tag","atMs"} (epoch ms)
 *   GET  /health               200 (the worker's node probe)
 *
 * Prints {"msg":"listening","port":N} once bound to HOST (loopback) and PORT (0: any free).
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';

const host = process.env.HOST ?? '127.0.0.1';
if (!['127.0.0.1', '::1'].includes(host)) throw new Error('the fake upstream binds loopback only');
const chunks = Number(process.env.BENCH_STREAM_CHUNKS ?? 5);
const gapMs = Number(process.env.BENCH_STREAM_GAP_MS ?? 20);
const usage = { prompt_tokens: 12, completion_tokens: chunks, total_tokens: 12 + chunks };
const nowEpochMs = () => performance.timeOrigin + performance.now();

const chatAnswer = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1,
  model: 'bench',
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: 'Hello from the bench.' },
      finish_reason: 'stop',
    },
  ],
  usage,
});

const event = (delta, extra = {}, finishReason = null) =>
  `data: ${JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'bench',
    choices: delta ? [{ index: 0, delta, finish_reason: finishReason }] : [],
    ...extra,
  })}\n\n`;

/**
 * As OpenAI and vLLM stream: the last content chunk carries `finish_reason` (a stream without
 * one is cut short, and the gateway fails it), then the usage chunk, then `[DONE]`.
 */
function stream(res) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let sent = 0;
  const next = () => {
    const delta = { ...(sent === 0 ? { role: 'assistant' } : {}), content: `word${sent} ` };
    res.write(event(delta, {}, sent === chunks - 1 ? 'stop' : null));
    sent += 1;
    if (sent < chunks) return void setTimeout(next, gapMs);
    res.write(event(undefined, { usage }));
    res.end('data: [DONE]\n\n');
  };
  next();
}

function json(res, text) {
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

function completion(res, request) {
  const tag = String(request.prompt ?? '');
  json(
    res,
    JSON.stringify({
      id: 'cmpl-bench',
      object: 'text_completion',
      choices: [{ index: 0, text: tag, finish_reason: 'stop' }],
      usage,
    }),
  );
  process.stdout.write(`${JSON.stringify({ msg: 'answered', tag, atMs: nowEpochMs() })}\n`);
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET') {
    res.writeHead(req.url === '/health' ? 200 : 404).end();
    return;
  }
  const parts = [];
  req.on('data', (part) => parts.push(part));
  req.on('end', () => {
    let request = {};
    try {
      request = JSON.parse(Buffer.concat(parts).toString('utf8') || '{}');
    } catch {
      res.writeHead(400).end();
      return;
    }
    const path = req.url.replace(/\?.*$/, '');
    if (path.endsWith('/chat/completions'))
      return request.stream ? stream(res) : json(res, chatAnswer);
    if (path.endsWith('/completions')) return completion(res, request);
    res.writeHead(404).end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), host, () => {
  process.stdout.write(`${JSON.stringify({ msg: 'listening', port: server.address().port })}\n`);
});
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
