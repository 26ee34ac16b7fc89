import type { Response } from 'express';

/** A CSV download: the attachment `<name>.csv` (`res.attachment` sets the type from the name). */
export function sendCsv(res: Response, name: string, csv: string | Buffer): void {
  res.type('text/csv').attachment(`${name}.csv`).send(csv);
}
