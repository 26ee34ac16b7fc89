import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startPostgresCluster, type PostgresCluster } from './postgres.js';
import { startRabbitMqNode, type RabbitMqNode } from './rabbitmq.js';

export interface TestInfrastructure {
  postgres: PostgresCluster;
  rabbitmq: RabbitMqNode;
  baseDir: string;
  stop(): Promise<void>;
}

/** Starts one PostgreSQL cluster and one RabbitMQ node, in parallel, under a fresh temp dir. */
export async function startTestInfrastructure(): Promise<TestInfrastructure> {
  const baseDir = mkdtempSync(path.join(os.tmpdir(), 'gateway-test-'));
  // The PostgreSQL cluster may belong to another (unprivileged) user, who must traverse this.
  chmodSync(baseDir, 0o755);
  const [postgres, rabbitmq] = await Promise.allSettled([
    startPostgresCluster({ baseDir: path.join(baseDir, 'pg') }),
    startRabbitMqNode({ baseDir: path.join(baseDir, 'rabbitmq') }),
  ]);
  if (postgres.status === 'rejected' || rabbitmq.status === 'rejected') {
    if (postgres.status === 'fulfilled') await postgres.value.stop();
    if (rabbitmq.status === 'fulfilled') await rabbitmq.value.destroy();
    const reasons = [postgres, rabbitmq]
      .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
      .map((r) => String(r.reason));
    throw new Error(`test infrastructure did not start:\n${reasons.join('\n')}`);
  }
  return {
    postgres: postgres.value,
    rabbitmq: rabbitmq.value,
    baseDir,
    stop: async () => {
      await Promise.allSettled([postgres.value.stop(), rabbitmq.value.destroy()]);
      rmSync(baseDir, { recursive: true, force: true });
    },
  };
}
