import type { Router } from 'express';
import express from 'express';
import type { Registry } from 'prom-client';

export interface ReadinessCheck {
  name: string;
  /** Resolves when the dependency is usable; rejects with the reason otherwise. */
  check(): Promise<void>;
}

export const READINESS_CHECK_TIMEOUT_MS = 2_000;

async function runCheck(check: ReadinessCheck): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer within ${READINESS_CHECK_TIMEOUT_MS} ms`)),
      READINESS_CHECK_TIMEOUT_MS,
    );
  });
  try {
    await Promise.race([check.check(), timeout]);
    return 'ok';
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    clearTimeout(timer);
  }
}

export interface OpsRoutesOptions {
  registry: Registry;
  checks: readonly ReadinessCheck[];
  isShuttingDown: () => boolean;
}

/**
 * `/healthz`: the process is alive (no dependency checks, so a broker outage never gets the
 * pod killed). `/readyz`: every dependency answers; 503 with each reason otherwise, and 503
 * while shutting down so load balancers drain the instance. `/metrics`: Prometheus text.
 */
export function opsRoutes(options: OpsRoutesOptions): Router {
  const router = express.Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    if (options.isShuttingDown()) {
      res.status(503).json({ status: 'shutting_down', checks: {} });
      return;
    }
    const results = await Promise.all(options.checks.map(runCheck));
    const checks = Object.fromEntries(options.checks.map((c, i) => [c.name, results[i]]));
    const ready = results.every((r) => r === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'unavailable', checks });
  });
  router.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', options.registry.contentType);
    res.send(await options.registry.metrics());
  });
  return router;
}

/** Ready while the message bus has a live connection and open channels. */
export const brokerReadiness = (bus: { isHealthy(): boolean }): ReadinessCheck => ({
  name: 'rabbitmq',
  check: async () => {
    if (!bus.isHealthy()) throw new Error('not connected to RabbitMQ');
  },
});

/** The failing checks of another service's 503 `/readyz` body, e.g. `schema: not migrated`. */
async function unreadyReasons(response: Response): Promise<string> {
  const body = (await response.json().catch(() => undefined)) as
    { checks?: Record<string, unknown> } | undefined;
  const failing = Object.entries(body?.checks ?? {}).filter(([, result]) => result !== 'ok');
  return failing.map(([name, result]) => `${name}: ${String(result)}`).join('; ');
}

/**
 * Ready while another service is ready: its `/readyz` answers 200. Its liveness is not enough: a
 * billing that answers `/healthz` but cannot reach its database (or whose schema is not
 * migrated yet) would make every request fail behind a "ready" edge.
 */
export const httpReadiness = (name: string, baseUrl: string): ReadinessCheck => ({
  name,
  check: async () => {
    const response = await fetch(new URL('/readyz', baseUrl), {
      signal: AbortSignal.timeout(READINESS_CHECK_TIMEOUT_MS),
    });
    if (response.status === 200) {
      await response.body?.cancel();
      return;
    }
    const reasons = await unreadyReasons(response);
    throw new Error(`${name} answered ${response.status}${reasons ? ` (${reasons})` : ''}`);
  },
});
