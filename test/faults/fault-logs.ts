import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/*
 * A failed scenario's own evidence. The services' logs (`.faults/logs`) are rewritten by the
 * next run, and CI keeps only what the suite prints: so a scenario that fails prints the
 * warnings and errors the services logged while it ran. The services log no secret, credential
 * or prompt (docs/security.md), so the lines are printed as they are, cut to a bounded length.
 */

const LEVELS = new Set(['warn', 'error', 'fatal']);
const MAX_LINE_CHARS = 400;

interface LogLine {
  level?: unknown;
  time?: unknown;
}

/** Whether `line` is a warning or error logged at or after `sinceMs`. */
function isRecentWarning(line: string, sinceMs: number): boolean {
  let entry: LogLine;
  try {
    entry = JSON.parse(line) as LogLine;
  } catch {
    return false;
  }
  return (
    typeof entry.level === 'string' &&
    LEVELS.has(entry.level) &&
    typeof entry.time === 'string' &&
    Date.parse(entry.time) >= sinceMs
  );
}

/**
 * The last `perFile` warnings and errors of each service log in `logDir` since `sinceMs`, one
 * block per log, for printing; empty when there are none.
 */
export function warningsSince(logDir: string, sinceMs: number, perFile = 25): string {
  let files: string[];
  try {
    files = readdirSync(logDir).filter((file) => file.endsWith('.log'));
  } catch {
    return '';
  }
  const blocks: string[] = [];
  for (const file of files.sort()) {
    const lines = readFileSync(path.join(logDir, file), 'utf8')
      .split('\n')
      .filter((line) => isRecentWarning(line, sinceMs));
    if (lines.length === 0) continue;
    const shown = lines.slice(-perFile).map((line) => `  ${line.slice(0, MAX_LINE_CHARS)}`);
    const skipped = lines.length - shown.length;
    const head = `${file}: ${lines.length} warning(s) and error(s)${skipped > 0 ? `, the last ${shown.length}` : ''}`;
    blocks.push([head, ...shown].join('\n'));
  }
  return blocks.join('\n');
}
