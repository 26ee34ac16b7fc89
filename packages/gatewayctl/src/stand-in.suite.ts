import { afterAll, beforeAll, beforeEach } from '@jest/globals';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runCli } from './index.js';

/** A stand-in operator API on 127.0.0.1: `answer` gets each request with its body as text. */
export async function startStandIn(
  answer: (request: IncomingMessage, response: ServerResponse, text: string) => void,
): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  const server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    request.on('end', () => answer(request, response, text));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Runs gatewayctl against `baseUrl` with an admin token, capturing what it prints. */
export async function cliAt(baseUrl: string, argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli([...argv, '--url', baseUrl], {
    env: { GATEWAY_ADMIN_TOKEN: 'adm_test' },
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
  });
  return { code, stdout, stderr };
}

/**
 * A stand-in operator API for one test file: started before its tests, closed after them.
 * `sent` holds `METHOD url` of each request of the current test (emptied before each one);
 * `cli` runs gatewayctl against it.
 */
export function useStandIn(
  answer: (request: IncomingMessage, response: ServerResponse, text: string) => void,
): { sent: string[]; cli: (...argv: string[]) => ReturnType<typeof cliAt> } {
  const sent: string[] = [];
  let standIn: Awaited<ReturnType<typeof startStandIn>> | undefined;
  beforeAll(async () => {
    standIn = await startStandIn((request, response, text) => {
      sent.push(`${request.method} ${request.url}`);
      answer(request, response, text);
    });
  });
  beforeEach(() => {
    sent.length = 0;
  });
  afterAll(() => standIn?.close());
  return { sent, cli: (...argv) => cliAt(standIn!.baseUrl, argv) };
}
