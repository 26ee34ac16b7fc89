import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { UpstreamError } from './errors.js';
import { openUpstream, readBytes, readJson } from './http.js';
import { createUpstreamAgent } from './upstream-agent.js';

/** Non-streamed answers are read up to a cap, never buffered whole (a loopback "node"). */

const MIB = 1024 * 1024;
const chunk = Buffer.alloc(64 * 1024, 'a');
let server: http.Server;
let baseUrl: string;
let endlessWritten = 0;
const upstreamAgent = createUpstreamAgent({ jobsInFlightMax: 4 });

/** Writes 64 KiB chunks until the client goes away (or 64 MiB): an answer without end. */
function endless(res: http.ServerResponse, status: number): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  const write = () => {
    while (endlessWritten < 64 * MIB && !res.destroyed) {
      endlessWritten += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', write);
    }
    res.end();
  };
  write();
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/small') return void res.end(JSON.stringify({ ok: true }));
    if (req.url === '/declared-huge') {
      res.writeHead(200, { 'Content-Length': String(32 * MIB) });
      return void res.write(chunk);
    }
    if (req.url === '/endless') return endless(res, 200);
    if (req.url === '/endless-error') return endless(res, 400);
    if (req.url === '/moved') {
      res.writeHead(302, { Location: `${baseUrl}/small` });
      return void res.end();
    }
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await upstreamAgent.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const open = (path: string) =>
  openUpstream({
    url: `${baseUrl}${path}`,
    method: 'GET',
    peer: 'node',
    dispatcher: upstreamAgent,
    signal: new AbortController().signal,
    firstByteTimeoutMs: 5_000,
  });

async function failureOf(promise: Promise<unknown>): Promise<UpstreamError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
}

describe('bounded upstream bodies', () => {
  it('reads an answer under the cap', async () => {
    await expect(readJson(await open('/small'), 5_000, MIB)).resolves.toEqual({ ok: true });
  });

  it('fails an answer whose Content-Length exceeds the cap before reading it', async () => {
    const error = await failureOf(readJson(await open('/declared-huge'), 5_000, MIB));
    expect(error.failure).toBe('bad_response');
    expect(error.retryable).toBe(true);
    expect(error.message).toBe(`model answer larger than ${MIB} bytes`);
  });

  it('stops reading an endless answer at the cap (JSON and bytes)', async () => {
    endlessWritten = 0;
    const json = await failureOf(readJson(await open('/endless'), 5_000, MIB));
    expect(json.failure).toBe('bad_response');
    // The reader gave up near the cap: the node was cut off long before its 64 MiB.
    expect(endlessWritten).toBeLessThan(16 * MIB);
    endlessWritten = 0;
    const bytes = await failureOf(readBytes(await open('/endless'), 5_000, MIB));
    expect(bytes.failure).toBe('bad_response');
  });

  it('reads at most 64 KiB of a refusal', async () => {
    endlessWritten = 0;
    const error = await failureOf(open('/endless-error'));
    expect(error).toMatchObject({ failure: 'rejected', detail: { status: 400 } });
    expect(endlessWritten).toBeLessThan(16 * MIB);
  });

  it('does not follow a redirect: another node may be tried', async () => {
    const error = await failureOf(open('/moved'));
    expect(error).toMatchObject({ failure: 'bad_response', detail: { status: 302 } });
    expect(error.retryable).toBe(true);
  });
});
