/**
 * How an upstream attempt failed. Failover (another node) is worth it for every kind but
 * `rejected` (the upstream refused the request itself: another node would too) and `aborted`
 * (the job was cancelled or ran out of time).
 */
export type UpstreamFailure =
  'connect' | 'timeout' | 'server_error' | 'rate_limited' | 'bad_response' | 'rejected' | 'aborted';

export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';

  constructor(
    readonly failure: UpstreamFailure,
    message: string,
    readonly detail: { status?: number; param?: string; retryAfterS?: number } = {},
  ) {
    super(message);
  }

  get retryable(): boolean {
    return this.failure !== 'rejected' && this.failure !== 'aborted';
  }
}
