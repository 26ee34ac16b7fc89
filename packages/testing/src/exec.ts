import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** Run as this unprivileged user (via runuser) when the current process is root. */
  asUser?: string;
}

/** Runs a command to completion; rejects with its output when it exits non-zero. */
export async function run(file: string, args: string[], options: RunOptions = {}): Promise<string> {
  let command = file;
  let commandArgs = args;
  if (options.asUser && process.getuid?.() === 0) {
    command = 'runuser';
    commandArgs = ['-u', options.asUser, '--', file, ...args];
  }
  return new Promise((resolve, reject) => {
    execFile(
      command,
      commandArgs,
      { env: options.env ?? process.env, timeout: options.timeoutMs ?? 60_000, maxBuffer: 4 << 20 },
      (error, stdout, stderr) => {
        if (error) {
          reject(
            new Error(`${file} ${args.join(' ')} failed: ${error.message}\n${stdout}\n${stderr}`),
          );
        } else {
          resolve(stdout);
        }
      },
    );
  });
}

/** Finds an executable: an explicit directory first, then versioned install dirs, then PATH. */
export function findExecutable(name: string, candidateDirs: string[]): string {
  const pathDirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
  for (const dir of [...candidateDirs, ...pathDirs]) {
    const file = path.join(dir, name);
    if (existsSync(file)) return file;
  }
  throw new Error(
    `${name} was not found (looked in ${[...candidateDirs, 'PATH'].join(', ')}); ` +
      'install it (bash .ci/run does) before running the tests',
  );
}

/** Lists dirs matching `<root>/<version>/<suffix>`, highest version first. */
export function versionedDirs(root: string, suffix: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .sort((a, b) => b.localeCompare(a, undefined, { numeric: true }))
    .map((version) => path.join(root, version, suffix));
}
