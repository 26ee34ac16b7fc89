import { describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/contracts';
import { isDependencyUnavailable } from './dependency-errors.js';
import { asGatewayError } from './errors.js';

/*
 * The database unavailable for now (connection refused or cut, pool timeout, server shutting
 * down, a standby refusing writes during a failover) is 503 with Retry-After, not 500.
 */

const coded = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

describe('a dependency unavailable for now', () => {
  it.each([
    ['a refused connection', coded('ECONNREFUSED')],
    ['a connection reset', coded('ECONNRESET')],
    ['a server shutting down (57P01)', coded('57P01')],
    ['a connection failure (class 08)', coded('08006')],
    ['a read-only standby during a failover (25006)', coded('25006')],
    ['pg cut mid-query', new Error('Connection terminated unexpectedly')],
    ["pg's pool timing out", new Error('timeout exceeded when trying to connect')],
    ["Prisma's closed connection", coded('P1017', 'Server has closed the connection.')],
    ["Prisma's unreachable server", Object.assign(new Error('x'), { errorCode: 'P1001' })],
    ['wrapped by a driver adapter', new Error('query failed', { cause: coded('57P03') })],
  ])('is recognised: %s', (_name, error) => {
    expect(isDependencyUnavailable(error)).toBe(true);
    const answer = asGatewayError(error);
    expect(answer.code).toBe('service_unavailable');
    expect(answer.status).toBe(503);
    expect(answer.details?.retryAfterS).toBe(1);
  });

  it.each([
    ['a unique violation', coded('23505')],
    ['a serialization failure', coded('40001')],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['not an error at all', 'boom'],
  ])('is not claimed for %s: still 500', (_name, error) => {
    expect(isDependencyUnavailable(error)).toBe(false);
    expect(asGatewayError(error).code).toBe('internal_error');
  });

  it('leaves a GatewayError as it is', () => {
    const refused = new GatewayError('conflict', 'no');
    expect(asGatewayError(refused)).toBe(refused);
  });
});
