import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { createLogger } from './logger.js';
import { createServiceMetrics } from './metrics.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(JSON.parse(String(chunk)));
      callback();
    },
  });
  return { lines, destination };
}

describe('createLogger', () => {
  it('writes JSON lines with the service name and level label', () => {
    const { lines, destination } = capture();
    createLogger({ service: 'edge', destination }).info({ requestId: 'r1' }, 'hello');
    expect(lines[0]).toMatchObject({
      service: 'edge',
      level: 'info',
      requestId: 'r1',
      msg: 'hello',
    });
  });

  it('redacts credentials and prompts', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ service: 'edge', destination });
    logger.info(
      {
        req: {
          headers: { authorization: 'Bearer sk-secret', 'x-internal-token': 'internal-secret' },
        },
        apiKey: 'sk-live-123',
        job: { token: 'jwt:abc', messages: [{ role: 'user', content: 'my prompt' }], model: 'm' },
      },
      'request',
    );
    const text = JSON.stringify(lines[0]);
    for (const secret of ['sk-secret', 'internal-secret', 'sk-live-123', 'jwt:abc', 'my prompt']) {
      expect(text).not.toContain(secret);
    }
    expect(text).toContain('"model":"m"');
  });
});

describe('createServiceMetrics', () => {
  it('names the HTTP histogram after the service and keeps registries apart', async () => {
    const a = createServiceMetrics('inference-worker', { defaultMetrics: false });
    const b = createServiceMetrics('edge', { defaultMetrics: false });
    a.httpRequestDurationSeconds.observe({ method: 'GET', route: '/healthz', status: '200' }, 0.01);
    const text = await a.registry.metrics();
    expect(text).toContain('inference_worker_http_request_duration_seconds_bucket');
    expect(text).toContain('route="/healthz"');
    expect(await b.registry.metrics()).not.toContain('inference_worker');
  });
});
