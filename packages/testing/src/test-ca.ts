import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface TestCertificates {
  dir: string;
  /** PEM of the test certificate authority (what WEBHOOK_CA_FILE names). */
  caPem: string;
  caFile: string;
  serverKeyPem: string;
  serverCertPem: string;
  remove(): void;
}

/** Host names the receiver's certificate covers (tests map them to 127.0.0.1 by lookup). */
export const RECEIVER_HOST = 'receiver.test';

const openssl = (dir: string, args: string[]) =>
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });

/**
 * A throwaway CA and a server certificate it signed, for loopback receivers: made with the
 * openssl CLI in a temp dir, valid one day, P-256 keys (fast to generate).
 */
export function createTestCertificates(): TestCertificates {
  const dir = mkdtempSync(path.join(tmpdir(), 'dispatcher-ca-'));
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const words = (text: string) => text.split(' ');
  openssl(dir, [
    ...words('req -x509 -keyout ca.key -out ca.pem -days 1'),
    ...ec,
    ...['-subj', '/CN=dispatcher test CA'],
    ...['-addext', 'basicConstraints=critical,CA:TRUE'],
    ...['-addext', 'keyUsage=critical,keyCertSign,cRLSign'],
  ]);
  openssl(dir, [
    ...words('req -keyout server.key -out server.csr'),
    ...ec,
    ...['-subj', `/CN=${RECEIVER_HOST}`],
  ]);
  writeFileSync(
    path.join(dir, 'server.ext'),
    [
      `subjectAltName=DNS:${RECEIVER_HOST},DNS:localhost,IP:127.0.0.1,IP:::1`,
      'basicConstraints=CA:FALSE',
      'keyUsage=digitalSignature',
      'extendedKeyUsage=serverAuth',
    ].join('\n'),
  );
  openssl(dir, [
    ...words('x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial'),
    ...words('-out server.pem -days 1 -extfile server.ext'),
  ]);
  const read = (file: string) => readFileSync(path.join(dir, file), 'utf8');
  return {
    dir,
    caPem: read('ca.pem'),
    caFile: path.join(dir, 'ca.pem'),
    serverKeyPem: read('server.key'),
    serverCertPem: read('server.pem'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
