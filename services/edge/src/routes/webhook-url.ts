import { GatewayError } from '@gateway/contracts';

/**
 * Edge's syntactic check of a webhook URL: absolute `https://` with a host and no credentials
 * (`http://` only with the development setting). Whether the address is public is decided by the
 * dispatcher when it connects (after DNS, so rebinding cannot slip through). Also the account
 * alerts' endpoint (`param`: `url`), delivered by the same dispatcher under the same rules.
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
  return value;
}
