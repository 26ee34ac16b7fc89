import { GatewayError } from '@gateway/contracts';
import { urlRefusal } from '@gateway/runtime';

/**
 * Edge's check of a webhook URL when it is set: absolute `https://` with a host and no
 * credentials (`http://` only with the development setting), and, when the host is an IP
 * literal in any spelling (decimal, hex, octal, IPv4-mapped...: WHATWG parsing normalises them),
 * a globally routable one, by the dispatcher's own policy. A name is checked by the dispatcher
 * when it connects (after DNS, so rebinding cannot slip through). Also the account alerts'
 * endpoint (`param`: `url`), delivered by the same dispatcher under the same rules.
 */
export function checkWebhookUrl(value: string, allowInsecure: boolean, param = 'webhook'): string {
  const refuse = (why: string) =>
    new GatewayError('invalid_request_body', `${param} ${why}`, { param });
  if (!URL.canParse(value)) throw refuse('must be an absolute URL');
  const url = new URL(value);
  if (url.protocol !== 'https:' && !(allowInsecure && url.protocol === 'http:')) {
    throw refuse('must be an https:// URL');
  }
  if (url.hostname === '') throw refuse('must name a host');
  if (url.username !== '' || url.password !== '') throw refuse('must not carry credentials');
  const refusal = urlRefusal(url, { allowInsecureLoopback: allowInsecure });
  if (refusal !== null) throw refuse(`must name a public address: ${refusal}`);
  return value;
}
