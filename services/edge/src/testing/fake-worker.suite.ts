import { randomUUID } from 'node:crypto';
import { makeEnvelope, parseEnvelope } from '@gateway/contracts';
import type {
  InferenceCancelPayload,
  InferenceJobPayload,
  InferenceReplyPayload,
} from '@gateway/contracts';
import type { Consumer, GatewayNames, MessageBus } from '@gateway/messaging';
import type { BillingUnderTest } from '../../../billing/src/testing/billing-under-test.suite.js';

/**
 * A scripted worker speaking the job protocol over the real broker, for edge's own tests (the
 * real worker is exercised end to end elsewhere). It settles or voids holds at the real billing,
 * so costs and balances in answers are billing's.
 */
export type Step =
  | { type: 'chunk'; data: Record<string, unknown> }
  | {
      type: 'final';
      data: Record<string, unknown>;
      usage?: { inputTokens: number; outputTokens: number };
      warnings?: string[];
      /** Settled, then lost on its way (edge's reply queue went with its connection). */
      lost?: boolean;
    }
  | { type: 'error'; code: string; message?: string }
  | { wait: number };

export type Script = (job: InferenceJobPayload) => Step[] | 'silent';

export interface FakeWorker {
  jobs: InferenceJobPayload[];
  /** Routing key each job arrived with, by job id. */
  queues: Map<string, string>;
  cancels: InferenceCancelPayload[];
  script: Script;
  stop(): Promise<void>;
}

export async function startFakeWorker(
  bus: MessageBus,
  names: GatewayNames,
  billing: BillingUnderTest,
  script: Script,
): Promise<FakeWorker> {
  const worker: FakeWorker = {
    jobs: [],
    queues: new Map(),
    cancels: [],
    script,
    stop: async () => {},
  };
  const consumers: Consumer[] = [];
  for (const queue of [names.queues.inferenceJobs, names.queues.inferenceJobsPriority]) {
    consumers.push(
      await bus.consume(
        queue,
        async (delivery) => {
          const job = parseEnvelope('inference.job', delivery.body).payload;
          worker.jobs.push(job);
          worker.queues.set(job.jobId, queue);
          const cancelled = () => worker.cancels.some((c) => c.jobId === job.jobId);
          void run(bus, billing, job, worker.script(job), cancelled).catch(() => undefined);
          return 'ack';
        },
        { prefetch: 16 },
      ),
    );
  }
  const cancelQueue = `${names.exchanges.control}.fake-worker.${randomUUID()}`;
  await bus.declareQueue({
    name: cancelQueue,
    kind: 'transient',
    bindings: [{ exchange: names.exchanges.control, routingKey: names.routingKeys.cancelJob }],
  });
  consumers.push(
    await bus.consume(
      cancelQueue,
      async (delivery) => {
        worker.cancels.push(parseEnvelope('inference.cancel', delivery.body).payload);
        return 'ack';
      },
      { prefetch: 16 },
    ),
  );
  worker.stop = async () => {
    await Promise.all(consumers.map((consumer) => consumer.cancel()));
  };
  return worker;
}

async function run(
  bus: MessageBus,
  billing: BillingUnderTest,
  job: InferenceJobPayload,
  steps: Step[] | 'silent',
  cancelled: () => boolean,
): Promise<void> {
  if (steps === 'silent') return;
  let seq = 0;
  const send = async (reply: Omit<InferenceReplyPayload, 'jobId' | 'seq'>) => {
    const payload = { ...reply, jobId: job.jobId, seq: seq++ } as InferenceReplyPayload;
    if (job.replyTo) {
      await bus.publish({ queue: job.replyTo }, makeEnvelope('inference.reply', payload));
    }
  };
  for (const step of steps) {
    if (cancelled()) {
      // As the real worker: nothing relayed is settled here, so the hold is voided.
      await billing.call('POST', `/holds/${job.holdId}/void`).catch(() => undefined);
      return;
    }
    if ('wait' in step) {
      await new Promise((resolve) => setTimeout(resolve, step.wait));
    } else if (step.type === 'chunk') {
      await send({ type: 'chunk', data: step.data });
    } else if (step.type === 'error') {
      await billing.call('POST', `/holds/${job.holdId}/void`).catch(() => undefined);
      await send({ type: 'error', error: { code: step.code, message: step.message ?? 'failed' } });
    } else {
      const usage = step.usage ?? { inputTokens: 10, outputTokens: 5 };
      const settled = await billing.call<{
        costMicroDzd: string;
        balance: { balanceMicroDzd: string };
      }>('POST', `/holds/${job.holdId}/settle`, usage);
      if (step.lost) return;
      await send({
        type: 'final',
        data: step.data,
        usage: {
          promptTokens: usage.inputTokens,
          completionTokens: usage.outputTokens,
          totalTokens: usage.inputTokens + usage.outputTokens,
        },
        costMicroDzd: settled.costMicroDzd,
        balanceMicroDzd: settled.balance.balanceMicroDzd,
        ...(step.warnings ? { warnings: step.warnings } : {}),
      });
    }
  }
}

/** A chat completion body as a node would answer (without `_service`). */
export function chatCompletion(job: InferenceJobPayload, content = 'Hello!') {
  return {
    id: job.jobId,
    object: 'chat.completion',
    created: 1_700_000_000,
    model: job.model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

export function chatChunk(job: InferenceJobPayload, content: string | null, usage = false) {
  return {
    id: job.jobId,
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: job.model,
    choices: content === null ? [] : [{ index: 0, delta: { content }, finish_reason: null }],
    ...(usage ? { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } } : {}),
  };
}
