import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { Keyring } from '@gateway/crypto';
import { assertChainUsable, historyOf, type ChainLink } from './response-chain.js';
import { itemIdsOf, itemIn, validatedOutputItems } from './response-items.js';
import {
  encodeContent,
  openContent,
  sealContent,
  type ContentOwner,
  type ResponseContent,
} from './response-sealing.js';

/*
 * The pure parts of stored Responses state: the chain's refusals and history order, item ids,
 * and the seal's binding to its row and reader. No database.
 */

const item = (id: string, text = id) => ({ id, type: 'message', content: text });
const content = (inputs: string[], outputs: string[]): ResponseContent => ({
  inputItems: inputs.map((id) => item(id)),
  response: { object: 'response', output: outputs.map((id) => item(id)) },
});

const link = (
  id: string,
  previousResponseId: string | null,
  more: Partial<ChainLink> = {},
): ChainLink => ({
  id,
  previousResponseId,
  readable: true,
  totalBytes: 10,
  inProgress: false,
  ...more,
});
const BOUNDS = { maxLinks: 3, maxBytes: 100 };

/** The refusal `assertChainUsable` throws, as code, param and message. */
function refusal(links: ChainLink[], requested = links[0]?.id ?? 'resp_head') {
  try {
    assertChainUsable(requested, links, BOUNDS);
  } catch (error) {
    const { code, param, message } = error as { code: string; param: string; message: string };
    return { code, param, message };
  }
  return null;
}

describe('the previous_response_id chain', () => {
  it('is usable when every link is readable, within bounds, and ends with no predecessor', () => {
    expect(refusal([link('c', 'b'), link('b', 'a'), link('a', null, { totalBytes: 100 })])).toBe(
      null,
    );
  });

  it('is 404 naming the requested id when nothing was found', () => {
    expect(refusal([], 'resp_x')).toEqual({
      code: 'response_not_found',
      param: 'previous_response_id',
      message: 'No stored response resp_x',
    });
  });

  it('is 404 naming the first link the reader may not read (expired, another token)', () => {
    const links = [link('c', 'b'), link('b', 'a', { readable: false })];
    expect(refusal(links)).toMatchObject({ code: 'response_not_found', message: /response b$/ });
  });

  it('is 404 naming a predecessor that does not exist (deleted, purged, never this account)', () => {
    expect(refusal([link('c', 'b'), link('b', 'gone')])).toMatchObject({
      code: 'response_not_found',
      message: 'No stored response gone',
    });
  });

  it('is 400 past its length or its bytes', () => {
    const long = [link('d', 'c'), link('c', 'b'), link('b', 'a'), link('a', null)];
    expect(refusal(long)).toMatchObject({
      code: 'invalid_request_body',
      param: 'previous_response_id',
      message: expect.stringContaining('more than 3 stored responses'),
    });
    expect(refusal([link('b', 'a'), link('a', null, { totalBytes: 101 })])).toMatchObject({
      code: 'invalid_request_body',
      message: expect.stringContaining('exceed 100 bytes'),
    });
  });

  it('is 400 naming a background response still in progress anywhere in the chain', () => {
    expect(refusal([link('c', 'b'), link('b', null, { inProgress: true })])).toMatchObject({
      code: 'invalid_request_body',
      param: 'previous_response_id',
      message: expect.stringContaining('Response b is a background response still in progress'),
    });
  });

  it('makes a history oldest first, each response its inputs then its outputs', () => {
    const newestFirst = [
      content(['in3'], ['out3']),
      content(['in2'], []),
      content(['in1'], ['o1']),
    ];
    expect(historyOf(newestFirst).map(({ id }) => id)).toEqual(['in1', 'o1', 'in2', 'in3', 'out3']);
  });
});

describe('items of a stored response', () => {
  it('are indexed once each, the first occurrence being the one found', () => {
    const stored: ResponseContent = {
      inputItems: [item('a', 'first'), item('b'), item('a', 'again')],
      response: { output: [item('b', 'output'), item('c')] },
    };
    expect(itemIdsOf(stored)).toEqual(['a', 'b', 'c']);
    expect(itemIn(stored, 'a')).toEqual(item('a', 'first'));
    expect(itemIn(stored, 'c')).toEqual(item('c'));
    expect(itemIn(stored, 'z')).toBeUndefined();
  });

  it('must be item records in the output, else 400 naming the item', () => {
    expect(validatedOutputItems({ status: 'completed' })).toEqual([]);
    expect(validatedOutputItems({ output: [item('x')] })).toEqual([item('x')]);
    for (const [output, param] of [
      [[{ type: 'message' }], 'response.output[0].id'],
      [[item('ok'), { id: 'bad id', type: 'message' }], 'response.output[1].id'],
      ['text', 'response.output'],
    ] as const) {
      expect(() => validatedOutputItems({ output })).toThrow(
        expect.objectContaining({ code: 'invalid_request_body', param }),
      );
    }
  });
});

describe('the seal of a stored response', () => {
  const keyring = Keyring.parse(randomBytes(32).toString('base64'));
  const owner: ContentOwner = { accountId: 'usr_a', responseId: 'resp_1', tokenDigest: null };
  const stored = content(['secret-input'], ['secret-output']);
  const plaintext = encodeContent(stored);
  const sealed = sealContent(keyring, owner, plaintext);
  const columns = {
    ciphertext: Buffer.from(sealed.ciphertext),
    nonce: Buffer.from(sealed.nonce),
    tag: Buffer.from(sealed.tag),
    key_version: sealed.keyVersion,
  };

  it('opens for its own row and reader, and shows no plaintext', () => {
    expect(openContent(keyring, owner, columns)).toEqual(stored);
    expect(Buffer.from(sealed.ciphertext).includes('secret-input')).toBe(false);
  });

  it('does not open for another response, account or reader', () => {
    for (const other of [
      { ...owner, responseId: 'resp_2' },
      { ...owner, accountId: 'usr_b' },
      { ...owner, tokenDigest: 'a'.repeat(64) },
    ]) {
      expect(() => openContent(keyring, other, columns)).toThrow();
    }
  });
});
