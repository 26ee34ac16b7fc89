import { existsSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A process's wall clock that a test can move while it runs, as NTP trouble or a VM resumed on
 * another host moves one replica's: libfaketime (Debian's `libfaketime`, installed by
 * infra/local/setup.sh) preloaded into the process reads its offset from a file, at most a
 * second old. Only the wall clock moves (`Date.now()`, `new Date()`); the monotonic clock that
 * Node's timers run on does not, so timeouts keep their length.
 */
export interface SkewableClock {
  /** Environment that makes a process started with it read its time through this clock. */
  readonly env: Record<string, string>;
  /** From now on (within a second) the process's wall clock is `offsetMs` off; 0 puts it right. */
  skew(offsetMs: number): void;
}

/** How long libfaketime keeps an offset it read before it reads the file again, seconds. */
const REREAD_S = 1;

/** The multi-threaded build (Node runs threads), wherever the machine's architecture put it. */
export function faketimeLibrary(): string {
  for (const dir of ['/usr/lib', '/usr/lib64']) {
    const candidates = existsSync(dir) ? readdirSync(dir) : [];
    for (const entry of ['', ...candidates]) {
      const file = path.join(dir, entry, 'faketime', 'libfaketimeMT.so.1');
      if (existsSync(file)) return file;
    }
  }
  throw new Error('libfaketime is not installed (infra/local/setup.sh installs Debian`s package)');
}

/** A clock whose offset lives in `file` (created, at 0). */
export function skewableClock(file: string): SkewableClock {
  const write = (offsetMs: number) => {
    const seconds = Math.round(offsetMs / 1_000);
    // Written aside and renamed over: libfaketime never reads a half-written file.
    writeFileSync(`${file}.next`, `${seconds < 0 ? '-' : '+'}${Math.abs(seconds)}s\n`);
    renameSync(`${file}.next`, file);
  };
  write(0);
  return {
    env: {
      LD_PRELOAD: faketimeLibrary(),
      FAKETIME_TIMESTAMP_FILE: file,
      FAKETIME_CACHE_DURATION: String(REREAD_S),
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
    },
    skew: write,
  };
}
