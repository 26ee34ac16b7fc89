// The repository: where it is, which files the checks read, its workspace packages.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export const SKIP_DIRS = new Set(['node_modules', 'dist', 'coverage', '.git', 'generated']);

/** Dot directories are run output (.data, .tmp, .bench...) except the CI entry point. */
export const isSkippedDir = (name) =>
  SKIP_DIRS.has(name) || (name.startsWith('.') && name !== '.ci');

/** Files under `dir` (absolute) whose name passes `keep`; skips build, install and run output. */
export function walk(dir, keep, out = []) {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!isSkippedDir(entry.name)) walk(path, keep, out);
    } else if (entry.isFile() && keep(entry.name, path)) {
      out.push(path);
    }
  }
  return out;
}

export const rel = (path) => relative(ROOT, path).split(sep).join('/');
export const read = (path) => readFileSync(path, 'utf8');
export const isDir = (path) => existsSync(path) && statSync(path).isDirectory();

/** The nearest directory at or above `dir` with a package.json, below the root; else the root. */
export function packageRoot(dir) {
  for (let d = dir; d.startsWith(ROOT) && d !== ROOT; d = dirname(d)) {
    if (existsSync(join(d, 'package.json'))) return d;
  }
  return ROOT;
}

/** Workspace package name -> directory, from pnpm-workspace.yaml's `packages` globs. */
export function workspacePackages() {
  const names = new Map();
  const { packages: globs = [] } = parseYaml(read(join(ROOT, 'pnpm-workspace.yaml')));
  for (const glob of globs) {
    const dirs = glob.endsWith('/*')
      ? readdirSync(join(ROOT, glob.slice(0, -2)), { withFileTypes: true })
          .filter((e) => e.isDirectory())
          .map((e) => join(ROOT, glob.slice(0, -2), e.name))
      : [join(ROOT, glob)];
    for (const dir of dirs) {
      const manifest = join(dir, 'package.json');
      if (existsSync(manifest)) names.set(JSON.parse(read(manifest)).name, dir);
    }
  }
  return names;
}
