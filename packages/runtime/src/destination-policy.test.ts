import { describe, expect, it } from '@jest/globals';
import { addressRefusal, urlRefusal } from './destination-policy.js';

const strict = { allowInsecureLoopback: false };
const development = { allowInsecureLoopback: true };

describe('destination policy', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.0.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.100.100.200', 'carrierGradeNat'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.192', 'reserved'],
    ['fd00:ec2::254', 'uniqueLocal'],
    ['::ffff:127.0.0.1', 'ipv4Mapped'],
    ['::ffff:8.8.8.8', 'ipv4Mapped'],
    ['64:ff9b::a00:1', 'rfc6052'],
    ['2002:7f00:1::', '6to4'],
  ])('refuses %s (%s)', (address, range) => {
    expect(addressRefusal(address, strict)).toBe(`${address} is a ${range} address`);
  });

  it.each(['8.8.8.8', '93.184.216.34', '2606:4700:4700::1111'])('allows public %s', (address) => {
    expect(addressRefusal(address, strict)).toBeNull();
  });

  it('the development setting allows loopback only, nothing else private', () => {
    expect(addressRefusal('127.0.0.1', development)).toBeNull();
    expect(addressRefusal('::1', development)).toBeNull();
    expect(addressRefusal('10.0.0.1', development)).not.toBeNull();
    expect(addressRefusal('169.254.169.254', development)).not.toBeNull();
    expect(addressRefusal('::ffff:127.0.0.1', development)).not.toBeNull();
  });

  it('allows https only, unless the development setting is on', () => {
    expect(urlRefusal(new URL('https://example.com/hook'), strict)).toBeNull();
    expect(urlRefusal(new URL('http://example.com/hook'), strict)).toMatch(/https only/);
    expect(urlRefusal(new URL('ftp://example.com/hook'), development)).toMatch(/https only/);
    expect(urlRefusal(new URL('http://127.0.0.1:8080/'), development)).toBeNull();
  });

  it('checks IP literals in every spelling URL parsing accepts', () => {
    for (const url of [
      'https://2130706433/',
      'https://0x7f.1/',
      'https://017700000001/',
      'https://[::ffff:127.0.0.1]/',
      'https://[::1]:8443/',
      'https://0.0.0.0/',
    ]) {
      expect(urlRefusal(new URL(url), strict)).toMatch(/is a \w+ address/);
    }
    expect(urlRefusal(new URL('https://localhost/'), strict)).toBeNull(); // checked after DNS
  });
});
