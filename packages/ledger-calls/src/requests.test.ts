import { GatewayError } from '@gateway/contracts';
import { settleRequestOf, voidReportOf } from './requests.js';

describe('reading a hold end', () => {
  it('turns a settlement usage into the call input, counts as bigint and times as dates', () => {
    expect(
      settleRequestOf('hold_a', {
        inputTokens: 12,
        outputTokens: 7n,
        reasoningTokens: 3,
        cancelled: true,
        startedAtMs: 1_764_460_800_000,
        generationMs: 250,
      }),
    ).toEqual({
      holdId: 'hold_a',
      inputTokens: 12n,
      outputTokens: 7n,
      reasoningTokens: 3n,
      cancelled: true,
      startedAt: new Date(1_764_460_800_000),
      generationMs: 250,
    });
    expect(settleRequestOf('hold_a', { inputTokens: 1, outputTokens: 2 })).toEqual({
      holdId: 'hold_a',
      inputTokens: 1n,
      outputTokens: 2n,
    });
  });

  it.each([
    ['inputTokens', { inputTokens: 1.5, outputTokens: 2 }],
    ['outputTokens', { inputTokens: 1, outputTokens: -1 }],
    ['reasoningTokens', { inputTokens: 1, outputTokens: 2, reasoningTokens: 2 ** 60 }],
  ])('refuses a %s that is not a count of tokens, naming it', (param, usage) => {
    let refusal: unknown;
    try {
      settleRequestOf('hold_a', usage);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(GatewayError);
    expect(refusal).toMatchObject({ code: 'invalid_request_body', param });
  });

  it("keeps a void's outcome and timings, and nothing when none was said", () => {
    expect(voidReportOf({ outcome: 'refused', generationMs: 5 })).toEqual({
      outcome: 'refused',
      generationMs: 5,
    });
    expect(voidReportOf()).toEqual({});
  });
});
