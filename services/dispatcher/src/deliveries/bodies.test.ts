import { describe, expect, it } from '@jest/globals';
import { completedEvent } from '../testing/harness.suite.js';
import { renderBody, variantABody, variantBBody } from './bodies.js';

const url = 'https://example.com/hook';
const failed = completedEvent(url, {
  status: 'failed',
  usage: { promptTokens: 12, completionTokens: 0 },
  costMicroDzd: null,
  results: undefined,
  error: { type: 'inference_failed', message: 'Inference failed.' },
});

describe('webhook bodies', () => {
  it('Variant A success: exactly the spec fields, cost in DZD', () => {
    expect(variantABody('whd_1', completedEvent(url, { costMicroDzd: '4200' }))).toEqual({
      id: 'whd_1',
      status: 'succeeded',
      usage: { prompt_tokens: 12, completion_tokens: 34 },
      cost_dzd: 0.0042,
      settlement: 'settled',
      results: [{ generated_text: 'a secret answer' }],
    });
  });

  it('Variant A failure: zero usage, null cost, error and never results', () => {
    const body = variantABody('whd_2', failed);
    expect(body).toEqual({
      id: 'whd_2',
      status: 'failed',
      usage: { prompt_tokens: 0, completion_tokens: 0 },
      cost_dzd: null,
      settlement: 'failed',
      error: { type: 'inference_failed', message: 'Inference failed.' },
    });
    expect(body).not.toHaveProperty('results');
  });

  it('Variant B success and failure', () => {
    const event = completedEvent(url, { costMicroDzd: '1500000', runtimeMs: 640 });
    expect(variantBBody(event)).toEqual({
      request_id: event.jobId,
      inference_status: { status: 'succeeded', runtime_ms: 640, cost: 1.5 },
      results: { generated_text: 'a secret answer' },
    });
    expect(variantBBody(failed)).toEqual({
      request_id: failed.jobId,
      inference_status: { status: 'failed', runtime_ms: 0, cost: 0 },
    });
  });

  it('embedding models carry embeddings in place of results', () => {
    const event = completedEvent(url, { results: undefined, embeddings: [[0.5, -1]] });
    expect(variantABody('whd_3', event)).toMatchObject({ embeddings: [[0.5, -1]] });
    expect(variantABody('whd_3', event)).not.toHaveProperty('results');
    expect(variantBBody(event).results).toEqual({ embeddings: [[0.5, -1]] });
  });

  it('renders compact JSON bytes', () => {
    const bytes = renderBody('A', 'whd_4', completedEvent(url));
    expect(bytes.toString('utf8')).toMatch(/^\{"id":"whd_4","status":"succeeded",/);
  });
});
