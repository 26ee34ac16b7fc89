import type { Tally } from './fault-check.js';

/* The suite's summary table (columns defined in test/faults/README.md). */

const COLUMNS: [string, (t: Tally) => number][] = [
  ['repetitions', (t) => t.repetitions],
  ['requests', (t) => t.requests],
  ['answers', (t) => t.answers],
  ['charges', (t) => t.charges],
  ['model calls', (t) => t.modelCalls],
  ['pending holds', (t) => t.pendingHolds],
  ['lost', (t) => t.lost],
  ['doubled', (t) => t.doubled],
  ['charged, no answer', (t) => t.chargedUnanswered],
  ['not stopped', (t) => t.unstopped],
  ['ledger violations', (t) => t.ledgerViolations],
];

/** A Markdown table, one row per scenario, then the first problems of each failing one. */
export function renderTable(tallies: Map<string, Tally>): string {
  const header = ['scenario', ...COLUMNS.map(([name]) => name)];
  const rows = [...tallies].map(([name, tally]) => [
    name,
    ...COLUMNS.map(([, value]) => String(value(tally))),
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    `| ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  const problems = [...tallies].flatMap(([name, tally]) =>
    tally.problems.slice(0, 10).map((problem) => `- ${name}: ${problem}`),
  );
  return [line(header), rule, ...rows.map(line), '', ...problems].join('\n');
}
