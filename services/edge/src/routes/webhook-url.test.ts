import { describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/contracts';
import { checkWebhookUrl } from './webhook-url.js';

describe('checkWebhookUrl', () => {
  it.each([
    ['https://hooks.example.com/x?y=1', false],
    ['https://203.0.113.7:8443/', false],
    ['http://127.0.0.1:9000/hook', true],
  ])('accepts %s (insecure allowed: %s)', (url, allowInsecure) => {
    expect(checkWebhookUrl(url, allowInsecure)).toBe(url);
  });

  it.each([
    ['http://hooks.example.com/x', false, 'must be an https:// URL'],
    ['ftp://hooks.example.com/x', true, 'must be an https:// URL'],
    ['/relative', false, 'must be an absolute URL'],
    ['https://user:pw@hooks.example.com/', false, 'must not carry credentials'],
  ])('refuses %s (insecure allowed: %s)', (url, allowInsecure, why) => {
    let error: unknown;
    try {
      checkWebhookUrl(url, allowInsecure);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ code: 'invalid_request_body', param: 'webhook' });
    expect((error as Error).message).toContain(why);
  });
});
