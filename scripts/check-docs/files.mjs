// Repository files and directories: the words of a span that name one, and whether it exists.
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ROOT, isDir, isSkippedDir, packageRoot } from './repo.mjs';

const FILE_EXT =
  /\.(?:ts|tsx|mts|mjs|js|cjs|sql|ya?ml|json|md|sh|prisma|toml|html|css|conf|txt|env|Dockerfile)$/;
const TOP_DIRS = new Set(
  readdirSync(ROOT, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !isSkippedDir(e.name))
    .map((e) => e.name),
);
const SOURCE_EXTS = ['.ts', '.tsx', '.mts', '.js', '.mjs'];

/**
 * Where a path of `markdown` may be relative to: the root, the document's directory, its package
 * root, the src/ of either, and the directories named in code spans of the section's heading
 * (`heading`). A document outside every package (the root README, docs/) that says `src/main.ts`
 * or `dist/main.js` means "a package's": those resolve against every workspace package too.
 */
export function fileBases(markdown, packageDirs, heading) {
  const dir = dirname(markdown);
  const pkg = packageRoot(dir);
  const bases = [ROOT, dir, join(dir, 'src'), pkg, join(pkg, 'src')];
  for (const span of heading) {
    for (const base of [ROOT, dir, pkg]) if (isDir(join(base, span))) bases.push(join(base, span));
  }
  return {
    own: [...new Set(bases)],
    packages: pkg === ROOT ? [...new Set([...bases, ...packageDirs])] : [...new Set(bases)],
  };
}

/** The words of a span that name repository paths. */
function documentedPaths(span, markdown) {
  const out = [];
  const dir = dirname(markdown);
  const pkg = packageRoot(dir);
  for (const raw of span.split(/\s+/)) {
    const word = raw
      .replace(/^[("'`]+/, '')
      .replace(/[)"'`,;]+$/, '')
      .replace(/^[\w.~^-]+:(?=[\w.-]+\/)(?!\/)/, ''); // `git show HEAD:services/...`
    if (!word.includes('/') || word.startsWith('/') || word.startsWith('@')) continue;
    // Globs, placeholders, URLs and other non-paths (`HEAD:path`, `a|b`, `$VAR/x`, `x=y/z`).
    if (/[*<>{}[\]…$:|=#]|\.\.\.|(?:^|\/)N{2,}_/.test(word)) continue;
    const head = word.split('/')[0];
    const looksLikePath =
      FILE_EXT.test(word) ||
      TOP_DIRS.has(head) ||
      ['src', '.', '..'].includes(head) ||
      (head !== '' && (isDir(join(dir, head)) || isDir(join(pkg, head))));
    if (looksLikePath) out.push(word);
  }
  return out;
}

/**
 * Whether `word` exists from one of `bases`; undefined for paths no check can expect to find
 * (installed, generated or written by runs).
 */
function pathExists(word, bases) {
  const path = word.replace(/\/$/, '');
  const segments = path.split('/');
  if (segments.includes('node_modules')) return undefined;
  if (segments.some((s, i) => s === 'generated' && segments[i - 1] === 'src')) return undefined;
  if (segments.some((s) => s.startsWith('.') && s !== '.' && s !== '..' && s !== '.ci')) {
    return undefined;
  }
  const distAt = segments.indexOf('dist');
  if (distAt >= 0) {
    // A build output: its package (dist alone) or its source must exist.
    const pkg = segments.slice(0, distAt).join('/');
    const rest = segments.slice(distAt + 1).join('/');
    if (!rest) return bases.some((base) => isDir(join(base, pkg)));
    const source = rest.replace(/\.d\.ts$|\.(?:js|mjs|cjs)$/, '');
    return bases.some(
      (base) =>
        SOURCE_EXTS.some((ext) => existsSync(join(base, pkg, 'src', source + ext))) ||
        isDir(join(base, pkg, 'src', source)),
    );
  }
  return bases.some((base) => existsSync(join(base, path)));
}

/** The paths a span names, each `{ name, found }`; paths nothing can be compared with left out. */
export function fileMentions(text, markdown, bases) {
  const out = [];
  for (const path of documentedPaths(text, markdown)) {
    const packageRelative = /^(?:src|dist)\//.test(path);
    const found = pathExists(path, packageRelative ? bases.packages : bases.own);
    if (found !== undefined) out.push({ name: path, found });
  }
  return out;
}
