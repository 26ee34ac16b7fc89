import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startPostgresCluster, type PostgresCluster } from './postgres.js';
import { startPostgresWithStandby, type PostgresWithStandby } from './postgres-standby.js';
import { startRabbitMqNode, type RabbitMqNode } from './rabbitmq.js';
import { startRabbitMqCluster, type RabbitMqCluster } from './rabbitmq-cluster.js';

export interface TestInfrastructure {
  postgres: PostgresCluster;
  /** The broker node; with `highAvailability`, the cluster's first node. */
  rabbitmq: RabbitMqNode;
  /** With `highAvailability`: the three-node cluster (`url` is its one address). */
  brokerCluster?: RabbitMqCluster;
  /** With `highAvailability`: `postgres` as a primary and a synchronous standby. */
  postgresStandby?: PostgresWithStandby;
  baseDir: string;
  stop(): Promise<void>;
}

export interface TestInfrastructureOptions {
  /**
   * PostgreSQL as a primary with a synchronous standby and RabbitMQ as a three-node cluster,
   * each behind one address (the fault suite's high-availability shape).
   */
  highAvailability?: boolean;
}

interface Started<T> {
  value: T;
  stop(): Promise<void>;
}

const database = async (
  baseDir: string,
  ha: boolean,
): Promise<Started<Pick<TestInfrastructure, 'postgres' | 'postgresStandby'>>> => {
  if (!ha) {
    const postgres = await startPostgresCluster({ baseDir });
    return { value: { postgres }, stop: () => postgres.stop() };
  }
  const pair = await startPostgresWithStandby(baseDir);
  return { value: { postgres: pair, postgresStandby: pair }, stop: () => pair.stop() };
};

const broker = async (
  baseDir: string,
  ha: boolean,
): Promise<Started<Pick<TestInfrastructure, 'rabbitmq' | 'brokerCluster'>>> => {
  if (!ha) {
    const rabbitmq = await startRabbitMqNode({ baseDir });
    return { value: { rabbitmq }, stop: () => rabbitmq.destroy() };
  }
  const cluster = await startRabbitMqCluster({ baseDir });
  return {
    value: { rabbitmq: cluster.nodes[0]!, brokerCluster: cluster },
    stop: () => cluster.destroy(),
  };
};

/** Starts PostgreSQL and RabbitMQ, in parallel, under a fresh temp dir. */
export async function startTestInfrastructure(
  options: TestInfrastructureOptions = {},
): Promise<TestInfrastructure> {
  const baseDir = mkdtempSync(path.join(os.tmpdir(), 'gateway-test-'));
  // The PostgreSQL cluster may belong to another (unprivileged) user, who must traverse this.
  chmodSync(baseDir, 0o755);
  const ha = options.highAvailability === true;
  const [pg, mq] = await Promise.allSettled([
    database(path.join(baseDir, 'pg'), ha),
    broker(path.join(baseDir, 'rabbitmq'), ha),
  ]);
  if (pg.status === 'rejected' || mq.status === 'rejected') {
    if (pg.status === 'fulfilled') await pg.value.stop();
    if (mq.status === 'fulfilled') await mq.value.stop();
    const reasons = [pg, mq]
      .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
      .map((r) => String(r.reason));
    throw new Error(`test infrastructure did not start:\n${reasons.join('\n')}`);
  }
  return {
    ...pg.value.value,
    ...mq.value.value,
    baseDir,
    stop: async () => {
      await Promise.allSettled([pg.value.stop(), mq.value.stop()]);
      rmSync(baseDir, { recursive: true, force: true });
    },
  };
}
