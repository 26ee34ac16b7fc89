import { describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/contracts';
import { checkWebhookUrl } from './webhook-url.js';

describe('checkWebhookUrl', () => {
  it.each([
    ['https://hooks.example.com/x?y=1', false],
    ['https://93.184.216.34:8443/', false],
    ['http://127.0.0.1:9000/hook', true],
  ])('accepts %s (insecure allowed: %s)', (url, allowInsecure) => {
    expect(checkWebhookUrl(url, allowInsecure)).toBe(url);
  });

  it.each([
    ['http://hooks.example.com/x', false, 'must be an https:// URL'],
    ['ftp://hooks.example.com/x', true, 'must be an https:// URL'],
    ['/relative', false, 'must be an absolute URL'],
    ['https://user:pw@hooks.example.com/', false, 'must not carry credentials'],
    // Address literals outside the public unicast ranges, in every spelling (security review).
    ['https://169.254.169.254/', false, '169.254.169.254 is a linkLocal address'],
    ['https://2852039166/', false, '169.254.169.254 is a linkLocal address'],
    ['https://0xa9fea9fe/', false, '169.254.169.254 is a linkLocal address'],
    ['https://0251.0376.0251.0376/', false, '169.254.169.254 is a linkLocal address'],
    ['https://169.254.169.254./', false, '169.254.169.254 is a linkLocal address'],
    ['https://[::ffff:169.254.169.254]/', false, 'is a ipv4Mapped address'],
    ['https://[fd00:ec2::254]/', false, 'fd00:ec2::254 is a uniqueLocal address'],
    ['https://10.0.0.1/', false, '10.0.0.1 is a private address'],
    ['https://100.64.0.1/', false, '100.64.0.1 is a carrierGradeNat address'],
    ['https://[fe80::1]/', false, 'fe80::1 is a linkLocal address'],
    ['https://127.0.0.1/', false, '127.0.0.1 is a loopback address'],
    ['https://[::]/', false, ':: is a unspecified address'],
    // The development setting lets loopback through, and nothing else.
    ['http://10.0.0.1/hook', true, '10.0.0.1 is a private address'],
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
