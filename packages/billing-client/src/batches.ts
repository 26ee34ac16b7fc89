/**
 * The batched calls of the request path: admissions (edge), settlements (the worker) and voids
 * (both), each through a NaturalBatcher onto its batch route. Billing answers every item as its
 * single route would (status, headers, body), so each caller gets exactly the answer or the
 * GatewayError it got before batching. A billing that has no batch routes (an older release,
 * during a rolling update) answers 404: the client then sends items one by one from then on.
 */
import {
  BILLING_API_PREFIX,
  BILLING_ROUTES as R,
  MAX_ADMISSION_BATCH,
  MAX_HOLD_END_BATCH,
  routePath,
  type AdmissionResponse,
  type BatchItemAnswer,
  type RouteAnswer,
  type RouteBody,
  type SettleResponse,
  type VoidResponse,
} from '@gateway/contracts';
import {
  currentRequestId,
  jsonOf,
  withoutRequestId,
  withRequestId,
  NaturalBatcher,
  settled,
  type InternalHttp,
  type ItemResult,
} from '@gateway/runtime';
import { errorFromAnswer } from './wire-errors.js';

export type BatchKind = 'admissions' | 'settlements' | 'voids';

export interface BatchOptions {
  /**
   * Batch calls of each kind running at once; calls made while they all run go together in the
   * next batch (NaturalBatcher, @gateway/runtime). 2 by default.
   */
  batchMaxInFlight?: number;
  /** Told the size of each batch sent, by kind (a metric). */
  onBatch?: (kind: BatchKind, size: number) => void;
}

/** The batch routes of `BILLING_ROUTES`, each answering an item as its single route would. */
type BatchRoute = typeof R.admitBatch | typeof R.settleBatch | typeof R.voidBatch;
type ItemOf<Batch extends BatchRoute> = RouteBody<Batch>['items'][number];

type AdmissionItem = ItemOf<typeof R.admitBatch>;
type SettleItem = ItemOf<typeof R.settleBatch>;
type VoidItem = ItemOf<typeof R.voidBatch>;

/** The single routes, for a billing without the batch routes. */
export interface SingleCalls {
  admit(request: AdmissionItem): Promise<AdmissionResponse>;
  settle(item: SettleItem): Promise<SettleResponse>;
  void(item: VoidItem): Promise<VoidResponse>;
}

/** The request the caller is serving, named on its settlement or void. */
export function withCurrentRequestId<T extends object>(item: T): T & { requestId?: string } {
  const requestId = currentRequestId();
  return requestId === undefined ? item : { ...item, requestId };
}

export interface Batches {
  admissions: NaturalBatcher<AdmissionItem, AdmissionResponse>;
  settlements: NaturalBatcher<SettleItem, SettleResponse>;
  voids: NaturalBatcher<VoidItem, VoidResponse>;
}

export function createBatches(
  http: InternalHttp,
  options: BatchOptions,
  single: SingleCalls,
): Batches {
  let batchRoutes = true;
  const batcher = <Batch extends BatchRoute, O>(
    kind: BatchKind,
    route: Batch,
    maxBatchSize: number,
    one: (item: ItemOf<Batch>) => Promise<O>,
  ) =>
    new NaturalBatcher<ItemOf<Batch>, O>(
      async (items) => {
        if (batchRoutes) {
          // The call serves many requests: its own id is billing's; each item names its own.
          const answers = await withoutRequestId(() => sendBatch(http, route, items));
          if (answers) return answers.map((answer) => resultOf<O>(answer));
          batchRoutes = false;
        }
        return Promise.all(
          items.map((item) => withRequestId(item.requestId, () => settled(() => one(item)))),
        );
      },
      {
        maxBatchSize,
        maxInFlight: options.batchMaxInFlight ?? 2,
        onBatch: (size) => options.onBatch?.(kind, size),
      },
    );
  return {
    admissions: batcher('admissions', R.admitBatch, MAX_ADMISSION_BATCH, single.admit),
    settlements: batcher('settlements', R.settleBatch, MAX_HOLD_END_BATCH, single.settle),
    voids: batcher('voids', R.voidBatch, MAX_HOLD_END_BATCH, single.void),
  };
}

/**
 * One batch call (idempotent: every item is, by its hold id); undefined when billing has no such
 * route. A refusal of the whole call (e.g. 503 billing unavailable) fails every item.
 */
async function sendBatch<Batch extends BatchRoute>(
  http: InternalHttp,
  route: Batch,
  items: ItemOf<Batch>[],
): Promise<BatchItemAnswer[] | undefined> {
  const response = await http({
    method: route.method,
    path: `${BILLING_API_PREFIX}${routePath(route)}`,
    body: { items },
    retry: true,
  });
  if (response.status === 404) return undefined;
  if (response.status >= 400) throw errorFromAnswer('billing', response);
  const { answers } = jsonOf<RouteAnswer<Batch>>(response);
  if (answers.length !== items.length) {
    throw new Error(`billing answered ${answers.length} items for a batch of ${items.length}`);
  }
  return answers;
}

/**
 * An item's answer as its single call would have returned or thrown it. The batch route's schema
 * leaves an item's body open (`BatchItemAnswer`: a success is the single route's answer, a
 * refusal the error body), so a success is taken as the single route's answer type, as `jsonOf`
 * takes a whole answer.
 */
function resultOf<O>(answer: BatchItemAnswer): ItemResult<O> {
  if (answer.status < 400) return { ok: true, value: answer.body as O };
  const error = errorFromAnswer('billing', {
    status: answer.status,
    headers: answer.headers ?? {},
    body: Buffer.from(JSON.stringify(answer.body)),
  });
  return { ok: false, error };
}
