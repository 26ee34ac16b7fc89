import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { warningsSince } from './fault-logs.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function logDir(files: Record<string, unknown[]>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'fault-logs-'));
  dirs.push(dir);
  for (const [name, lines] of Object.entries(files)) {
    const text = lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line)));
    writeFileSync(path.join(dir, name), `${text.join('\n')}\n`);
  }
  return dir;
}

const at = (iso: string, level: string, msg: string) => ({ level, time: iso, msg });

describe('warningsSince', () => {
  it("prints each log's warnings and errors logged since the scenario began, and nothing else", () => {
    const dir = logDir({
      'billing.log': [
        at('2026-11-29T10:00:00.000Z', 'error', 'before the scenario'),
        at('2026-11-29T10:00:02.000Z', 'info', 'applied'),
        at('2026-11-29T10:00:03.000Z', 'warn', 'unread answer not refunded yet; retrying'),
        'not json',
      ],
      'edge.log': [at('2026-11-29T10:00:04.000Z', 'info', 'answered')],
      'worker.log': [at('2026-11-29T10:00:05.000Z', 'error', 'settlement queued')],
      'notes.txt': [at('2026-11-29T10:00:05.000Z', 'error', 'not a service log')],
    });
    const printed = warningsSince(dir, Date.parse('2026-11-29T10:00:01.000Z'));
    expect(printed.split('\n').map((line) => line.replace(/"time":"[^"]+",/, ''))).toEqual([
      'billing.log: 1 warning(s) and error(s)',
      '  {"level":"warn","msg":"unread answer not refunded yet; retrying"}',
      'worker.log: 1 warning(s) and error(s)',
      '  {"level":"error","msg":"settlement queued"}',
    ]);
  });

  it('keeps the last lines of a long log, each cut to a bounded length', () => {
    const lines = Array.from({ length: 30 }, (_, i) =>
      at(
        `2026-11-29T10:00:${String(10 + i).padStart(2, '0')}.000Z`,
        'error',
        `${i} ${'x'.repeat(500)}`,
      ),
    );
    const printed = warningsSince(logDir({ 'worker.log': lines }), 0, 5).split('\n');
    expect(printed[0]).toBe('worker.log: 30 warning(s) and error(s), the last 5');
    expect(printed).toHaveLength(6);
    expect(printed[1]).toContain('"msg":"25 ');
    expect(printed.slice(1).every((line) => line.length <= 402)).toBe(true);
  });

  it('prints nothing for a directory that is not there', () => {
    expect(warningsSince(path.join(tmpdir(), 'fault-logs-none', 'missing'), 0)).toBe('');
  });
});
