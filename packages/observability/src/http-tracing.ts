import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  bindToContext,
  contextFromHeaders,
  markSpanFailed,
  runInContext,
  SpanKind,
  startSpan,
} from './tracing.js';

/**
 * A SERVER span per HTTP request, the child of the caller's `traceparent` (a client's, or edge's
 * and the worker's on billing's internal API), current for the rest of the request. Named
 * `<METHOD> <route>` once routing has matched (`labels`), so a span never carries an id from
 * the path; the request id ties it to the log lines. Ended when the answer is sent or the
 * client leaves.
 */
export function traceHttpRequests(
  labels: (req: IncomingMessage) => { route?: string; requestId?: string },
): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  return (req, res, next) => {
    const method = req.method ?? 'GET';
    const { span, context } = startSpan(method, {
      kind: SpanKind.SERVER,
      // The caller's `traceparent` only: a public client's `tracestate` is its own data, not
      // passed on to billing, the queue or the model nodes.
      parent: contextFromHeaders({ traceparent: req.headers.traceparent }),
      attributes: { 'http.request.method': method },
    });
    bindToContext(context, req);
    bindToContext(context, res);
    let ended = false;
    const end = (finished: boolean) => {
      if (ended) return;
      ended = true;
      const { route, requestId } = labels(req);
      if (requestId) span.setAttribute('gateway.request_id', requestId);
      if (route) {
        span.updateName(`${method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('http.response.status_code', res.statusCode);
      if (!finished) markSpanFailed(span, 'client closed the connection');
      else if (res.statusCode >= 500) markSpanFailed(span, String(res.statusCode));
      span.end();
    };
    res.once('finish', () => end(true));
    res.once('close', () => end(res.writableFinished));
    runInContext(context, next);
  };
}
