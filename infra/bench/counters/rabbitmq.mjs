/**
 * The broker's global message counters (rabbit_global_counters, what the rabbitmq_prometheus
 * plugin exports as rabbitmq_global_*), read with `rabbitmqctl eval`: no plugin, so the broker
 * starts and works exactly as in the tests. Counters split by protocol and queue type are summed.
 */
const COUNTERS = {
  published: 'messages_received_total',
  routed: 'messages_routed_total',
  delivered: 'messages_delivered_total',
  acknowledged: 'messages_acknowledged_total',
  confirmed: 'messages_confirmed_total',
};

const SUM_ALL_GROUPS =
  'maps:fold(fun(_, M, Acc) -> maps:fold(fun(K, V, A) -> ' +
  'maps:update_with(K, fun(X) -> X + V end, V, A) end, Acc, M) end, #{}, ' +
  'rabbit_global_counters:overview()).';

/** { published, routed, ... } from the text of an Erlang map `#{name => 12, ...}`. */
export function parseCounters(text) {
  const values = new Map([...text.matchAll(/(\w+) => (\d+)/g)].map((m) => [m[1], Number(m[2])]));
  return Object.fromEntries(
    Object.entries(COUNTERS).map(([name, counter]) => [name, values.get(counter)]),
  );
}

/** Reads the counters of a RabbitMqNode from packages/testing (about half a second). */
export async function brokerCounters(rabbitmq) {
  return parseCounters(await rabbitmq.ctl('eval', SUM_ALL_GROUPS));
}
