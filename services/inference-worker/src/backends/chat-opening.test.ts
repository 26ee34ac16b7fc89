import { describe, expect, it } from '@jest/globals';
import { withOpening } from './chat.js';

/*
 * A stream's opening chunks (the role's delta, nothing generated) go out merged into its first
 * chunk with output (docs/adr/0065-stream-opens-with-output.md): one reply, so an edge never
 * relays the opening alone.
 */

const chunk = (choices: unknown[]) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  choices,
});

describe('withOpening', () => {
  it('gives the first output the role of the opening chunk, in one chunk', () => {
    const opening = [chunk([{ index: 0, delta: { role: 'assistant', content: '' } }])];
    const first = chunk([{ index: 0, delta: { content: 'Salam' }, logprobs: null }]);
    expect(withOpening(opening, first)).toEqual(
      chunk([{ index: 0, delta: { role: 'assistant', content: 'Salam' }, logprobs: null }]),
    );
  });

  it('keeps a choice only the opening had (n > 1), and leaves a chunk without opening as is', () => {
    const opening = [
      chunk([{ index: 0, delta: { role: 'assistant' } }]),
      chunk([{ index: 1, delta: { role: 'assistant' } }]),
    ];
    const first = chunk([{ index: 0, delta: { content: 'A' } }]);
    expect(withOpening(opening, first).choices).toEqual([
      { index: 0, delta: { role: 'assistant', content: 'A' } },
      { index: 1, delta: { role: 'assistant' } },
    ]);
    expect(withOpening([], first)).toBe(first);
  });
});
