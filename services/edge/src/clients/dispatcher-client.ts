import {
  DISPATCHER_API_PREFIX,
  DISPATCHER_PATHS,
  type WebhookDelivery,
  type WebhookDeliveryPage,
  type WebhookExpirePreviousResult,
  type WebhookSigningSecret,
  type WebhookSigningSecretList,
} from '@gateway/contracts';
import { credentialRefused, errorFromAnswer } from '@gateway/billing-client';
import { createInternalHttp, jsonOf } from '@gateway/runtime';
import type { InternalRequest, InternalResponse } from '@gateway/runtime';

/**
 * The dispatcher's internal API (contract: packages/contracts/src/dispatcher-api.ts): typed
 * calls for the dashboard (answers of the contract, refusals thrown as the dispatcher decided
 * them; its 401 to edge's own credential is 500, edge's fault), and `forward` for the operator
 * API's `/admin/v1` proxy alone, which passes an operator's request and the answer through
 * verbatim (`path` relative to `/internal/v1`).
 */
export interface DispatcherClient {
  forward(request: InternalRequest): Promise<InternalResponse>;
  listSecrets(accountId: string): Promise<WebhookSigningSecretList>;
  rotateSecret(accountId: string): Promise<WebhookSigningSecret>;
  expirePreviousSecret(accountId: string): Promise<WebhookExpirePreviousResult>;
  /** `page`: `limit` and `cursor`, checked by the dispatcher. */
  listDeliveries(accountId: string, page: URLSearchParams): Promise<WebhookDeliveryPage>;
  /** Within the account: another account's delivery is not found. */
  redeliver(accountId: string, deliveryId: string): Promise<WebhookDelivery>;
  close(): Promise<void>;
}

export function createDispatcherClient(options: {
  baseUrl: string;
  token: string;
  timeoutMs: number;
}): DispatcherClient {
  const http = createInternalHttp({ service: 'dispatcher', ...options });
  const forward = (request: InternalRequest) =>
    http({ ...request, path: `${DISPATCHER_API_PREFIX}${request.path}` });
  const call = async <T>(method: 'GET' | 'POST', path: string): Promise<T> => {
    const answer = await forward({ method, path });
    if (answer.status === 401) throw credentialRefused('dispatcher');
    if (answer.status >= 400) throw errorFromAnswer('dispatcher', answer);
    return jsonOf<T>(answer);
  };
  const paths = DISPATCHER_PATHS;
  return {
    forward,
    listSecrets: (accountId) => call('GET', paths.secrets(accountId)),
    rotateSecret: (accountId) => call('POST', paths.rotate(accountId)),
    expirePreviousSecret: (accountId) => call('POST', paths.expirePrevious(accountId)),
    listDeliveries: (accountId, page) =>
      call('GET', `${paths.deliveries(accountId)}?${page.toString()}`),
    redeliver: (accountId, deliveryId) => call('POST', paths.redeliver(deliveryId, accountId)),
    close: () => http.close(),
  };
}
