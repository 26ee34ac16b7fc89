/**
 * Where one gateway request's work goes, from each component's own counters read before and
 * after a measured run: PostgreSQL transactions and statements, RabbitMQ messages, and the
 * internal HTTP calls billing answered. Divided by the run's answered requests.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { billingRouteCounts, routeDelta } from './billing-http.mjs';
import {
  STATS_PUBLISHED_AFTER_MS,
  connectPostgresCounters,
  sqlProfileDelta,
  statementDelta,
} from './postgres.mjs';
import { brokerCounters } from './rabbitmq.mjs';

/**
 * The one service that may call a route the bench's requests use (billing's internal routes
 * allow only that caller); billing does not label callers, so any other route is "edge or worker".
 */
const CALLER_BY_ROUTE = {
  'POST /authenticate': 'edge',
  'POST /admissions': 'edge',
  'POST /admissions/batch': 'edge',
  'POST /holds/settlements': 'worker',
  'POST /holds/published': 'edge',
  'POST /holds/:holdId/settle': 'worker',
  'GET /holds/:holdId': 'worker',
  'POST /nodes/health': 'worker',
};

/** { edge: { route: perRequest }, worker: {...}, 'edge or worker': {...} } */
function byCaller(callsByRoute, requests) {
  const callers = {};
  for (const [route, calls] of Object.entries(callsByRoute)) {
    const caller = CALLER_BY_ROUTE[route] ?? 'edge or worker';
    callers[caller] = { ...callers[caller], [route]: calls / requests };
  }
  return callers;
}

const perEach = (counts, requests) =>
  Object.fromEntries(Object.entries(counts).map(([name, n]) => [name, n / requests]));

/**
 * Counters of a started gateway (stack.mjs): `start()` reads them and resolves to `stop(answered)`,
 * which reads them again and resolves to the figures per answered request.
 */
export async function gatewayCounters({ infra, services, databases, sqlProfile = false }) {
  const postgres = await connectPostgresCounters(infra.postgres.adminUrl, databases);
  const billingUrl = services.billing.baseUrl;
  const start = async () => {
    // Scraped first: billing's gauges query its database, and those transactions must be
    // published before the reading below, not counted in the run.
    const routesBefore = await billingRouteCounts(billingUrl);
    await sleep(STATS_PUBLISHED_AFTER_MS);
    const before = {
      transactions: await postgres.transactions(),
      statements: await postgres.statements(),
      messages: await brokerCounters(infra.rabbitmq),
      sql: sqlProfile ? await postgres.sqlProfile() : undefined,
    };
    return (answered) => stop(before, routesBefore, answered);
  };
  const stop = async (before, routesBefore, answered) => {
    const requests = answered || 1;
    // Statements and messages are counted as they happen: read at once, before anything else.
    const statements = statementDelta(before.statements, await postgres.statements());
    const messages = await brokerCounters(infra.rabbitmq);
    await sleep(STATS_PUBLISHED_AFTER_MS);
    const transactions = (await postgres.transactions()) - before.transactions;
    // Function times are published with the transaction counts: read after the same wait.
    const sql = before.sql && sqlProfileDelta(before.sql, await postgres.sqlProfile(), requests);
    // Scraped last, for the same reason as in start().
    const calls = routeDelta(routesBefore, await billingRouteCounts(billingUrl));
    const messageDelta = Object.fromEntries(
      Object.entries(messages).map(([name, n]) => [name, n - before.messages[name]]),
    );
    return {
      answered,
      postgresTransactionsPerRequest: transactions / requests,
      postgresStatementsPerRequest: statements.total / requests,
      postgresTopStatementsPerRequest: statements.top.map((s) => ({
        query: s.query,
        perRequest: s.calls / requests,
      })),
      rabbitmqMessagesPerRequest: perEach(messageDelta, requests),
      billingCallsPerRequest: byCaller(calls, requests),
      ...(sql ? { sqlProfile: sql } : {}),
    };
  };
  return { start, close: () => postgres.close() };
}
