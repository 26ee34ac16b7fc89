// `pnpm run generate`: runs `prisma generate` only when prisma/schema.prisma changed since the
// last generation (or the client is missing). Prisma's CLI takes ~10 s here even with nothing
// to do, and rewriting the client while tests import it would race them.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const schema = readFileSync(path.join(root, 'prisma/schema.prisma'));
const digest = createHash('sha256').update(schema).digest('hex');
const stamp = path.join(root, 'src/generated/prisma/.schema-sha256');

if (
  existsSync(stamp) &&
  readFileSync(stamp, 'utf8') === digest &&
  !process.argv.includes('--force')
) {
  process.exit(0);
}
const result = spawnSync('prisma', ['generate'], { cwd: root, stdio: 'inherit', shell: false });
if (result.status !== 0) process.exit(result.status ?? 1);
writeFileSync(stamp, digest);
