/** Writes either JSON (for scripts) or a plain-text table (for people). */
export interface Output {
  json: boolean;
  write(text: string): void;
}

/** An answer's object (a contract's type): its fields by name. */
type Row = object;

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** A fixed-width table: a header row, then one row per item. */
export function table(rows: readonly Row[], columns: string[]): string {
  if (rows.length === 0) return '(none)\n';
  const cells = rows.map((row) => columns.map((column) => cell(Reflect.get(row, column))));
  const widths = columns.map((column, i) =>
    Math.max(column.length, ...cells.map((values) => values[i]!.length)),
  );
  const line = (values: string[]) =>
    values
      .map((value, i) => value.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join('\n') + '\n';
}

/** One object as `key: value` lines. */
export function record(row: Row): string {
  const width = Math.max(...Object.keys(row).map((key) => key.length));
  return (
    Object.entries(row)
      .map(([key, value]) => `${key.padEnd(width)}  ${cell(value)}`)
      .join('\n') + '\n'
  );
}

export function show(out: Output, value: unknown, render: () => string): void {
  out.write(out.json ? JSON.stringify(value, null, 2) + '\n' : render());
}
