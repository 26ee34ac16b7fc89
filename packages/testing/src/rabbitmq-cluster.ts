import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { freeLoopbackPort } from './ports.js';
import { startRabbitMqNode, stopEpmd, type RabbitMqNode } from './rabbitmq.js';
import { startTcpBalancer, type TcpBalancer } from './tcp-balancer.js';

export interface RabbitMqCluster {
  readonly nodes: readonly RabbitMqNode[];
  /**
   * One address in front of every node, as a Kubernetes Service or a TCP load balancer puts it:
   * each new connection goes to the next node that accepts it, so a client that lost its node
   * reconnects to another. What the services are given.
   */
  readonly url: string;
  readonly balancer: TcpBalancer;
  /** `rabbitmqctl` on the first running node. */
  ctl(...args: string[]): Promise<string>;
  importDefinitions(definitions: object): Promise<void>;
  destroy(): Promise<void>;
}

export interface StartRabbitMqClusterOptions {
  baseDir: string;
  /** Three by default: quorum queues then keep a majority with one node down. */
  size?: number;
}

/**
 * A RabbitMQ cluster from Debian's package on loopback: `size` nodes sharing one epmd and one
 * Erlang cookie, the others joined to the first (`join_cluster`), behind one balancing address.
 * Quorum queues declared once the cluster has formed get a member on every node.
 */
export async function startRabbitMqCluster(
  options: StartRabbitMqClusterOptions,
): Promise<RabbitMqCluster> {
  const size = options.size ?? 3;
  const cluster = {
    epmdPort: await freeLoopbackPort(),
    erlangCookie: randomBytes(24).toString('hex').toUpperCase(),
  };
  const suffix = randomBytes(3).toString('hex');
  const nodes: RabbitMqNode[] = [];
  try {
    // One at a time: the first starts the shared epmd, and two cores boot one node faster alone.
    for (let i = 0; i < size; i += 1) {
      const baseDir = path.join(options.baseDir, `node${i + 1}`);
      mkdirSync(baseDir, { recursive: true });
      nodes.push(
        await startRabbitMqNode({ baseDir, cluster, nodeName: `gwc${i + 1}${suffix}@localhost` }),
      );
    }
    const [first, ...others] = nodes;
    for (const node of others) {
      await node.ctl('stop_app');
      await node.ctl('join_cluster', first!.nodeName);
      await node.ctl('start_app');
    }
    await first!.ctl('await_online_nodes', String(size));
  } catch (error) {
    await Promise.allSettled(nodes.map((node) => node.stop()));
    await stopEpmd(cluster.epmdPort);
    throw error;
  }
  const balancer = await startTcpBalancer(nodes.map((node) => node.port));
  const running = async () => {
    for (const node of nodes) {
      try {
        await node.ctl('status');
        return node;
      } catch {
        // Down: try the next one.
      }
    }
    throw new Error('no node of the RabbitMQ cluster is running');
  };
  return {
    nodes,
    url: `amqp://guest:guest@127.0.0.1:${balancer.port}`,
    balancer,
    ctl: async (...args) => (await running()).ctl(...args),
    importDefinitions: async (definitions) => (await running()).importDefinitions(definitions),
    destroy: async () => {
      await balancer.close();
      await Promise.allSettled(nodes.map((node) => node.stop()));
      await stopEpmd(cluster.epmdPort);
    },
  };
}
