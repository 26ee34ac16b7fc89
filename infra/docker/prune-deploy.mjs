// Drops named packages from a `pnpm deploy` output, with every package only they needed.
// `node prune-deploy.mjs <dir> <name>...`. Why: a dependency the service lists for tooling
// (billing's `prisma`, the CLI that generates its client) is also linked as an optional peer
// of a runtime package, so `deploy --prod` keeps it; the runtime never imports it.
// Layout (pnpm's isolated node_modules): <dir>/node_modules/<name> links to
// .pnpm/<id>/node_modules/<name>, whose dependencies are its siblings in that folder.
import { existsSync, lstatSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import path from 'node:path';

const [dir, ...dropped] = process.argv.slice(2);
if (!dir || dropped.length === 0) throw new Error('usage: prune-deploy.mjs <dir> <name>...');
const store = realpathSync(path.join(dir, 'node_modules/.pnpm'));

/** Package names (scoped ones as @scope/name) linked in a node_modules folder. */
function linkedNames(folder) {
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter((entry) => entry !== '.pnpm' && !entry.startsWith('.'))
    .flatMap((entry) =>
      entry.startsWith('@')
        ? readdirSync(path.join(folder, entry)).map((name) => `${entry}/${name}`)
        : [entry],
    );
}

const kept = new Set();
function keep(folder, name) {
  if (dropped.includes(name)) return;
  const target = path.join(folder, name);
  if (!existsSync(target)) return;
  const real = realpathSync(target);
  if (!real.startsWith(store + path.sep)) return;
  const id = path.relative(store, real).split(path.sep)[0];
  if (kept.has(id)) return;
  kept.add(id);
  const siblings = path.join(store, id, 'node_modules');
  for (const sibling of linkedNames(siblings)) keep(siblings, sibling);
}

const top = path.join(dir, 'node_modules');
for (const name of linkedNames(top)) keep(top, name);
for (const name of dropped) rmSync(path.join(top, name), { force: true, recursive: true });
let removed = 0;
for (const id of readdirSync(store)) {
  if (id === 'node_modules' || kept.has(id)) continue;
  rmSync(path.join(store, id), { recursive: true, force: true });
  removed += 1;
}
// The hoisted links (.pnpm/node_modules) that now point nowhere.
const hoisted = path.join(store, 'node_modules');
for (const name of linkedNames(hoisted)) {
  const link = path.join(hoisted, name);
  if (lstatSync(link).isSymbolicLink() && !existsSync(link)) rmSync(link);
}
console.log(`pruned ${removed} packages only ${dropped.join(', ')} needed`);
