import { describe, expect, it } from '@jest/globals';
import { countTextTokens, splitIntoTokens } from '@gateway/tokenizer';
import { answerText, choiceAnswer, readConversation, standInAnswer } from './answer.js';
import { planGeneration } from './plan.js';

const LENGTH = { answerTokensMin: 30, answerTokensMax: 60 };

describe('stand-in answers', () => {
  it('are a deterministic function of the seed text, with a natural length in range', () => {
    const seeds = ['hello', 'What is the capital of Algeria?', 'x'.repeat(500), 'مرحبا'];
    for (const seed of seeds) {
      const answer = answerText(seed, LENGTH);
      expect(answerText(seed, LENGTH)).toBe(answer);
      const tokens = countTextTokens(answer);
      expect(tokens).toBeGreaterThanOrEqual(30);
      expect(tokens).toBeLessThanOrEqual(62);
    }
    expect(answerText('a', LENGTH)).not.toBe(answerText('b', LENGTH));
    expect(standInAnswer('hello')).toBe(answerText('hello', LENGTH));
  });

  it('derive from the last user message and read a trailing assistant message as a prefix', () => {
    const conversation = readConversation([
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'hi ' },
          { type: 'text', text: 'there' },
        ],
      },
      { role: 'assistant', content: 'Green' },
    ]);
    expect(conversation).toEqual({ seedText: 'hi there', assistantPrefix: 'Green' });
    // A prefix that does not match the answer is ignored: the full answer is generated.
    expect(choiceAnswer(conversation, 0, LENGTH).prefix).toBe(
      answerText('hi there', LENGTH).startsWith('Green') ? 'Green' : '',
    );
  });
});

describe('generation plans', () => {
  const answer = answerText('plan me', LENGTH);
  const pieces = splitIntoTokens(answer);

  it('run to the natural end with finish reason stop', () => {
    const plan = planGeneration({ answer, prefix: '', maxTokens: 1000, stop: [], keepStop: false });
    expect(plan).toEqual({ pieces, generatedTokens: pieces.length, finishReason: 'stop' });
  });

  it('cut at max tokens with length, and continue from the cut to the same full answer', () => {
    const cut = planGeneration({ answer, prefix: '', maxTokens: 7, stop: [], keepStop: false });
    expect(cut.finishReason).toBe('length');
    expect(cut.pieces).toEqual(pieces.slice(0, 7));
    const prefix = cut.pieces.join('');
    const rest = planGeneration({ answer, prefix, maxTokens: 1000, stop: [], keepStop: false });
    expect(rest.finishReason).toBe('stop');
    expect(rest.pieces).toEqual(pieces.slice(7));
    expect(prefix + rest.pieces.join('')).toBe(answer);
  });

  it('continue a prefix that ends inside a token', () => {
    const prefix = answer.slice(0, 3);
    const rest = planGeneration({ answer, prefix, maxTokens: 1000, stop: [], keepStop: false });
    expect(prefix + rest.pieces.join('')).toBe(answer);
  });

  it('stop at the earliest stop sequence, dropping it (OpenAI) or keeping it (TGI)', () => {
    const stopWord = answer.slice(10, 14);
    const at = answer.indexOf(stopWord);
    const dropped = planGeneration({
      answer,
      prefix: '',
      maxTokens: 1000,
      stop: ['zzz', stopWord],
      keepStop: false,
    });
    expect(dropped.finishReason).toBe('stop_sequence');
    expect(dropped.pieces.join('')).toBe(answer.slice(0, at));
    const kept = planGeneration({
      answer,
      prefix: '',
      maxTokens: 1000,
      stop: [stopWord],
      keepStop: true,
    });
    expect(kept.pieces.join('')).toBe(answer.slice(0, at + stopWord.length));
    expect(kept.generatedTokens).toBe(kept.pieces.length);
    expect(dropped.generatedTokens).toBe(kept.generatedTokens);
  });

  it('report length when the stop sequence lies beyond the cap', () => {
    const lateStop = answer.slice(-5);
    const plan = planGeneration({
      answer,
      prefix: '',
      maxTokens: 3,
      stop: [lateStop],
      keepStop: false,
    });
    expect(plan.finishReason).toBe('length');
  });
});
