/**
 * Internal HTTP calls billing answered, by route, from its own Prometheus metrics: the `_count`
 * of billing_http_request_duration_seconds, labelled by route template. Who called is the route's
 * allowed caller (services/billing/src/http/internal-routes.ts): billing does not label callers.
 */
const SAMPLE = /^billing_http_request_duration_seconds_count\{([^}]*)\} (\S+)$/gm;

const label = (labels, name) => new RegExp(`${name}="([^"]*)"`).exec(labels)?.[1];

/** Calls per `METHOD route` of /internal routes (all statuses) from a /metrics text. */
export function parseRouteCounts(text) {
  const counts = new Map();
  for (const [, labels, value] of text.matchAll(SAMPLE)) {
    const route = label(labels, 'route');
    if (!route?.startsWith('/internal/')) continue;
    const key = `${label(labels, 'method')} ${route.slice('/internal/v1'.length)}`;
    counts.set(key, (counts.get(key) ?? 0) + Number(value));
  }
  return counts;
}

export async function billingRouteCounts(billingUrl) {
  return parseRouteCounts(await (await fetch(`${billingUrl}/metrics`)).text());
}

/** Calls per route between two readings (routes not called are left out). */
export function routeDelta(before, after) {
  return Object.fromEntries(
    [...after]
      .map(([route, count]) => [route, count - (before.get(route) ?? 0)])
      .filter(([, count]) => count > 0)
      .sort((a, b) => b[1] - a[1]),
  );
}
