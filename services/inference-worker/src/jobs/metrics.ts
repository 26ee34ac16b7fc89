import { Counter, Histogram, type Registry } from 'prom-client';

export interface WorkerMetrics {
  jobs: Counter<'endpoint' | 'tier' | 'result'>;
  jobDurationSeconds: Histogram<'endpoint' | 'tier'>;
  upstreamFailures: Counter<'failure'>;
}

export function createWorkerMetrics(registry: Registry): WorkerMetrics {
  return {
    jobs: new Counter({
      name: 'inference_worker_jobs_total',
      help: 'Jobs finished, by endpoint, service tier and result (redelivered and dead-lettered included)',
      labelNames: ['endpoint', 'tier', 'result'] as const,
      registers: [registry],
    }),
    jobDurationSeconds: new Histogram({
      name: 'inference_worker_job_duration_seconds',
      help: 'Time from picking a job up to its durable outcome',
      labelNames: ['endpoint', 'tier'] as const,
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers: [registry],
    }),
    upstreamFailures: new Counter({
      name: 'inference_worker_upstream_failures_total',
      help: 'Failed attempts on model nodes or the external provider, by kind',
      labelNames: ['failure'] as const,
      registers: [registry],
    }),
  };
}
