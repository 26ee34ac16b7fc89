import { createInternalHttp } from '@gateway/runtime';
import type { InternalRequest, InternalResponse } from '@gateway/runtime';

/**
 * The dispatcher's internal API (webhook secrets and deliveries), which the operator API passes
 * through: `path` is relative to `/internal/v1`.
 */
export interface DispatcherClient {
  forward(request: InternalRequest): Promise<InternalResponse>;
  close(): Promise<void>;
}

export function createDispatcherClient(options: {
  baseUrl: string;
  token: string;
  timeoutMs: number;
}): DispatcherClient {
  const http = createInternalHttp({ service: 'dispatcher', ...options });
  return {
    forward: (request) => http({ ...request, path: `/internal/v1${request.path}` }),
    close: () => http.close(),
  };
}
