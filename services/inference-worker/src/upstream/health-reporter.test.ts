import { afterEach, describe, expect, it } from '@jest/globals';
import { createStandInModelNode, type StandInModelNode } from '@gateway/stand-ins';
import type { NodeHealthReport } from '@gateway/contracts';
import { createNodeRegistry, startHealthReporter } from './node-pool.js';
import { createUpstreamAgent } from './upstream-agent.js';

type Reported = NodeHealthReport['nodes'][number];

describe('node health reports', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function until(reports: Reported[], match: (r: Reported) => boolean): Promise<Reported> {
    const deadlineMs = Date.now() + 10_000;
    while (Date.now() < deadlineMs) {
      const found = reports.find(match);
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no matching report in ${JSON.stringify(reports)}`);
  }

  it('reports a node down when it stops and healthy again when it returns, only on change', async () => {
    let node: StandInModelNode = await createStandInModelNode();
    cleanups.push(() => node.close());
    const upstreamAgent = createUpstreamAgent({ jobsInFlightMax: 1 });
    cleanups.push(() => upstreamAgent.close());
    const registry = createNodeRegistry({ dispatcher: upstreamAgent });
    cleanups.push(() => registry.stop());
    registry.state(node.url);
    registry.startHealthChecks(100);
    const reports: Reported[] = [];
    let calls = 0;
    const reporter = startHealthReporter({
      registry,
      report: async (report) => {
        calls += 1;
        expect(report.workerId).toBe('w-test');
        reports.push(...report.nodes);
      },
      workerId: 'w-test',
      intervalMs: 50,
      refreshMs: 60_000,
    });
    cleanups.push(() => reporter.stop());

    await until(reports, (r) => r.healthy);
    // Nothing changed: no further call (probes every 100 ms, reports only on change).
    const callsWhenUp = calls;
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(calls).toBe(callsWhenUp);

    const port = node.port;
    await node.close();
    const down = await until(reports, (r) => !r.healthy);
    expect(down).toMatchObject({ url: node.url.replace(/\/+$/, ''), lastErrorKind: 'unreachable' });

    reports.length = 0;
    node = await createStandInModelNode({ port });
    const up = await until(reports, (r) => r.healthy);
    expect(up.lastErrorKind).toBeUndefined();
  });
});
