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
