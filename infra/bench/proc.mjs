/**
 * CPU time and resident memory of processes from /proc (Linux): what each gateway process costs,
 * read from outside so that no service needs instrumenting.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

let clockTicksPerS;

/** Kernel clock ticks per second (utime and stime count them); 100 on nearly every Linux. */
export function clockTicks() {
  if (clockTicksPerS === undefined) {
    try {
      clockTicksPerS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
    } catch {
      clockTicksPerS = 100;
    }
  }
  return clockTicksPerS;
}

/**
 * utime + stime (ticks) and parent pid from the text of /proc/<pid>/stat. The command name (field 2)
 * may hold spaces and parentheses, so fields are counted from the last ')'.
 */
export function parseStat(text) {
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state): ppid is field 4, utime 14, stime 15.
  return { ppid: Number(rest[1]), cpuTicks: Number(rest[11]) + Number(rest[12]) };
}

/** VmRSS in bytes from the text of /proc/<pid>/status (undefined for a zombie). */
export function parseRssBytes(text) {
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(text);
  return match ? Number(match[1]) * 1024 : undefined;
}

const read = (pid, file) => {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined; // the process is gone
  }
};

/** CPU milliseconds in a stat file's text (0 for a process or thread that is gone). */
const statCpuMs = (text) => (text ? (parseStat(text).cpuTicks * 1000) / clockTicks() : 0);

/** CPU milliseconds a process has used so far (0 once it is gone). */
export function cpuMs(pid) {
  return statCpuMs(read(pid, 'stat'));
}

/**
 * CPU milliseconds of a process's main thread (its task with the process's own id). For a Node
 * process the rest is V8's background threads (optimising compiler, GC helpers) and libuv's
 * pool: the part that shrinks once the JIT has warmed up.
 */
export function mainThreadCpuMs(pid) {
  return statCpuMs(read(pid, `task/${pid}/stat`));
}

export function rssBytes(pid) {
  const text = read(pid, 'status');
  return text ? parseRssBytes(text) : undefined;
}

/** The pid and its direct children (PostgreSQL's backends are children of the postmaster). */
export function withChildren(pid) {
  const pids = [pid];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const text = read(entry, 'stat');
    if (text && parseStat(text).ppid === pid) pids.push(Number(entry));
  }
  return pids;
}

/**
 * Starts counting CPU for named groups of pids (a group's pids are listed again at the end, so
 * backends that appear meanwhile count; ones that exit in between are lost, hence "about").
 * The returned stop function gives { cpuMs: { group: ms }, backgroundCpuMs: { group: ms } } over
 * the interval, the second being the CPU outside the groups' processes' main threads.
 */
export function cpuMeter(groups) {
  const snapshot = () =>
    Object.fromEntries(
      Object.entries(groups).map(([name, listPids]) => [
        name,
        new Map(listPids().map((pid) => [pid, { all: cpuMs(pid), main: mainThreadCpuMs(pid) }])),
      ]),
    );
  const before = snapshot();
  return () => {
    const after = snapshot();
    const used = {};
    const background = {};
    for (const name of Object.keys(groups)) {
      let sum = 0;
      let outsideMain = 0;
      for (const [pid, now] of after[name]) {
        const then = before[name].get(pid) ?? { all: 0, main: 0 };
        sum += now.all - then.all;
        outsideMain += now.all - now.main - (then.all - then.main);
      }
      used[name] = sum;
      background[name] = outsideMain;
    }
    return { cpuMs: used, backgroundCpuMs: background };
  };
}
