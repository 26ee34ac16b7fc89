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
  /** Admissions the caller makes in billing's database itself (edge's API keys, ADR 0070). */
  directAdmissions?: DirectAdmissions;
}

/**
 * Admissions made in billing's database by the caller (edge admits API keys there, ADR 0070):
 * the items it `takes` go to `admit`, in the same batch as the rest go to billing's route, and
 * each is answered as billing's batch route would have answered it.
 */
export interface DirectAdmissions {
  takes(item: AdmissionItem): boolean;
  /** Each item's answer, in order; a rejection fails every item of the call. */
  admit(items: readonly AdmissionItem[]): Promise<BatchItemAnswer[]>;
}

/** The batch routes of `BILLING_ROUTES`, each answering an item as its single route would. */
type BatchRoute = typeof R.admitBatch | typeof R.settleBatch | typeof R.voidBatch;
type ItemOf<Batch extends BatchRoute> = RouteBody<Batch>['items'][number];

export type AdmissionItem = ItemOf<typeof R.admitBatch>;
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
  /** Items through their batch route, or one by one once billing turned out to have none. */
  const viaBilling =
    <Batch extends BatchRoute, O>(route: Batch, one: (item: ItemOf<Batch>) => Promise<O>) =>
    async (items: ItemOf<Batch>[]): Promise<ItemResult<O>[]> => {
      if (batchRoutes) {
        // The call serves many requests: its own id is billing's; each item names its own.
        const answers = await withoutRequestId(() => sendBatch(http, route, items));
        if (answers) return answers.map((answer) => resultOf<O>(answer));
        batchRoutes = false;
      }
      return Promise.all(
        items.map((item) => withRequestId(item.requestId, () => settled(() => one(item)))),
      );
    };
  const batcher = <I, O>(
    kind: BatchKind,
    maxBatchSize: number,
    send: (items: I[]) => Promise<ItemResult<O>[]>,
  ) =>
    new NaturalBatcher<I, O>(send, {
      maxBatchSize,
      maxInFlight: options.batchMaxInFlight ?? 2,
      onBatch: (size) => options.onBatch?.(kind, size),
    });
  const admitViaBilling = viaBilling<typeof R.admitBatch, AdmissionResponse>(
    R.admitBatch,
    single.admit,
  );
  const { directAdmissions } = options;
  return {
    admissions: batcher(
      'admissions',
      MAX_ADMISSION_BATCH,
      directAdmissions ? splitAdmissions(directAdmissions, admitViaBilling) : admitViaBilling,
    ),
    settlements: batcher(
      'settlements',
      MAX_HOLD_END_BATCH,
      viaBilling<typeof R.settleBatch, SettleResponse>(R.settleBatch, single.settle),
    ),
    voids: batcher(
      'voids',
      MAX_HOLD_END_BATCH,
      viaBilling<typeof R.voidBatch, VoidResponse>(R.voidBatch, single.void),
    ),
  };
}

/**
 * A batch of admissions split by where each is made: the direct ones and billing's at once, each
 * item's result back in its place.
 */
function splitAdmissions(
  direct: DirectAdmissions,
  viaBilling: (items: AdmissionItem[]) => Promise<ItemResult<AdmissionResponse>[]>,
) {
  return async (items: AdmissionItem[]): Promise<ItemResult<AdmissionResponse>[]> => {
    const taken = items.map((item) => direct.takes(item));
    const mine = items.filter((_, index) => taken[index]);
    const theirs = items.filter((_, index) => !taken[index]);
    // A call that fails as a whole fails its own items only, never the other call's.
    const [own, billing] = await Promise.all([
      eachOrAll(mine, async (some) =>
        (await direct.admit(some)).map((answer) => resultOf<AdmissionResponse>(answer)),
      ),
      eachOrAll(theirs, viaBilling),
    ]);
    return taken.map((isMine) => (isMine ? own.shift() : billing.shift()) ?? missing());
  };
}

/** `send`'s results, or its rejection as every item's; nothing sent for no items. */
async function eachOrAll<I, O>(
  items: I[],
  send: (items: I[]) => Promise<ItemResult<O>[]>,
): Promise<ItemResult<O>[]> {
  if (items.length === 0) return [];
  try {
    return await send(items);
  } catch (error) {
    return items.map(() => ({ ok: false, error }));
  }
}

const missing = (): ItemResult<never> => ({ ok: false, error: new Error('admission: no answer') });

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
