import { describe, expect, it } from '@jest/globals';
import type { RabbitMqNode, TestInfrastructure } from '@gateway/testing';
import { reviveBrokers } from './fault-round.js';

/** A broker node that is running or not, and counts its starts. */
function brokerNode(nodeName: string, running: boolean) {
  const node = {
    nodeName,
    starts: 0,
    running: () => running,
    start: async () => {
      node.starts += 1;
      running = true;
    },
  };
  return node;
}

const infraOf = (parts: Partial<TestInfrastructure>) => ({ infra: parts as TestInfrastructure });

describe('reviveBrokers', () => {
  it('starts a single broker that exited, and says so', async () => {
    const node = brokerNode('rabbit@single', false);
    const lines: string[] = [];
    await reviveBrokers(infraOf({ rabbitmq: node as unknown as RabbitMqNode }), (line) =>
      lines.push(line),
    );
    expect(node.starts).toBe(1);
    expect(node.running()).toBe(true);
    expect(lines).toEqual([
      'fault suite: RabbitMQ node rabbit@single is not running (it exited); starting it',
    ]);
  });

  it("leaves running nodes alone and starts only a cluster's dead one", async () => {
    const nodes = [brokerNode('a', true), brokerNode('b', false), brokerNode('c', true)];
    const lines: string[] = [];
    await reviveBrokers(
      infraOf({
        rabbitmq: nodes[0] as unknown as RabbitMqNode,
        brokerCluster: { nodes: nodes as unknown as RabbitMqNode[] } as never,
      }),
      (line) => lines.push(line),
    );
    expect(nodes.map((node) => node.starts)).toEqual([0, 1, 0]);
    expect(lines).toHaveLength(1);
  });
});
