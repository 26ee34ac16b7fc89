import type { Request, Response } from 'express';
import type { ConsoleDeps } from '../deps.js';
import { sendCsv } from './billing-calls.js';
import { pickQuery } from './query.js';

/** CSV when asked by `?format=csv` (a download link cannot set headers) or `Accept: text/csv`. */
export const wantsCsv = (req: Request) =>
  req.query.format === 'csv' || req.accepts(['application/json', 'text/csv']) === 'text/csv';

/**
 * An account's statement as the operator API gives it (`?from=&to=`, JSON or CSV); billing
 * checks the dates. Only `from` and `to` travel on: nothing else of the URL reaches billing.
 */
export async function sendStatement(
  deps: ConsoleDeps,
  req: Request,
  res: Response,
  accountId: string,
): Promise<void> {
  const range = new URLSearchParams(pickQuery(req.query, ['from', 'to']));
  if (!wantsCsv(req)) {
    res.json(await deps.billing.operator.statement(accountId, range));
    return;
  }
  sendCsv(
    res,
    `statement-${accountId}`,
    await deps.billing.operator.statementCsv(accountId, range),
  );
}
