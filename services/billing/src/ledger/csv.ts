/** RFC 4180 CSV: comma-separated, CRLF line ends, fields quoted when needed. */

const NEEDS_QUOTES = /[",\r\n]/;
/** Spreadsheets run cells starting with these as formulas (CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;

export function csvField(value: string): string {
  return NEEDS_QUOTES.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/**
 * A free-text field (e.g. a reference typed by an operator): prefixed with `'` when it would
 * start a spreadsheet formula, then quoted as needed.
 */
export function csvTextField(value: string | null): string {
  if (value === null) return '';
  return csvField(FORMULA_START.test(value) ? `'${value}` : value);
}

export function csvRow(fields: readonly string[]): string {
  return `${fields.join(',')}\r\n`;
}
