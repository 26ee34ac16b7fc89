import {
  DISPATCHER_API_PREFIX,
  DISPATCHER_ROUTES as R,
  routePath,
  type Route,
  type RouteAnswer,
  type RouteInput,
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
 * The dispatcher's internal API (`DISPATCHER_ROUTES`, packages/contracts): typed calls for the
 * dashboard (answers of the contract, refusals thrown as the dispatcher decided them; its 401
 * to edge's own credential is 500, edge's fault), and `forward` for the operator API's
 * `/admin/v1` proxy alone, which passes an operator's request and the answer through verbatim
 * (`path` relative to `/internal/v1`).
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
  /** The route's answer, or the dispatcher's refusal thrown. */
  const call = async <Called extends Route>(route: Called, input: RouteInput<Called>) => {
    const answer = await forward({
      method: route.method,
      path: routePath(route, input.params, input.query),
      ...(input.body === undefined ? {} : { body: input.body }),
    });
    if (answer.status === 401) throw credentialRefused('dispatcher');
    if (answer.status >= 400) throw errorFromAnswer('dispatcher', answer);
    return jsonOf<RouteAnswer<Called>>(answer);
  };
  const account = (accountId: string) => ({ params: { accountId } });
  return {
    forward,
    listSecrets: (accountId) => call(R.listSecrets, account(accountId)),
    rotateSecret: (accountId) => call(R.rotateSecret, account(accountId)),
    expirePreviousSecret: (accountId) => call(R.expirePreviousSecret, account(accountId)),
    listDeliveries: (accountId, page) =>
      call(R.listDeliveries, { ...account(accountId), query: page }),
    redeliver: (accountId, deliveryId) =>
      call(R.redeliverOwn, { params: { accountId, deliveryId } }),
    close: () => http.close(),
  };
}
