import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';

/*
 * What keeps the images buildable everywhere and their builds short, checked without building
 * them (`pnpm test:images` builds and runs them): no frontend image to fetch, one pinned base,
 * the same build stage in all five Dockerfiles (so they share its layers), and the budgets the
 * README states being the ones the image test enforces.
 */

const DOCKERFILES = [
  'services/billing/Dockerfile',
  'services/dispatcher/Dockerfile',
  'services/inference-worker/Dockerfile',
  'services/edge/Dockerfile',
  'infra/docker/stand-ins.Dockerfile',
];
const read = (file: string) => readFileSync(file, 'utf8');

/** Instructions (continuation lines joined, comments dropped). */
const instructions = (file: string) =>
  read(file)
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter((line) => line && !line.startsWith('#'));

/** The instructions before the image's own `pnpm --filter <pkg> deploy`. */
function sharedBuild(file: string): string[] {
  const all = instructions(file);
  const own = all.findIndex((line) => / deploy --prod /.test(line));
  if (own < 0) throw new Error(`${file} has no pnpm deploy step`);
  return all.slice(0, own);
}

describe('the Dockerfiles', () => {
  it('need no frontend image: no `# syntax` directive (BuildKit fetches it from Docker Hub)', () => {
    for (const file of DOCKERFILES)
      expect([file, /^#\s*syntax\s*=/im.test(read(file))]).toEqual([file, false]);
  });

  it('all build on the same digest-pinned Node LTS base', () => {
    const bases = DOCKERFILES.map((file) =>
      instructions(file).find((i) => i.startsWith('ARG NODE_IMAGE=')),
    );
    expect(new Set(bases).size).toBe(1);
    expect(bases[0]).toMatch(/^ARG NODE_IMAGE=node:(22|24)[\w.-]*@sha256:[0-9a-f]{64}$/);
  });

  it('start with the same build stage, which compiles every image, so they share its layers', () => {
    const [first, ...rest] = DOCKERFILES.map(sharedBuild);
    for (const [i, other] of rest.entries())
      expect([DOCKERFILES[i + 1], other]).toEqual([DOCKERFILES[i + 1], first]);
    expect(first).toContain('COPY . .');
    const compile = first!.find((line) => line.includes('tsc -b'))!;
    for (const project of [
      'services/billing',
      'services/dispatcher',
      'services/edge',
      'services/inference-worker',
      'packages/stand-ins',
    ]) {
      expect(compile.split(' ')).toContain(project);
    }
  });
});

describe('.dockerignore', () => {
  it('keeps crash dumps, tests and docs out of the build context, but the workspace manifests in', () => {
    const entries = read('.dockerignore').split('\n');
    for (const entry of ['**/erl_crash.dump', 'test', 'docs', 'k8s'])
      expect(entries).toContain(entry);
    expect(entries).toContain('!test/clients/package.json');
  });
});

describe('image budgets', () => {
  it('are the same in the README and in test/images/run.sh', () => {
    const enforced = [...read('test/images/run.sh').matchAll(/^ {2}"([\w-]+) \S+ (\d+)"$/gm)].map(
      ([, name, mb]) => [name, Number(mb)],
    );
    const stated = [
      ...read('README.md').matchAll(/^\| `([\w-]+)`\s*\| \d+ MB\s*\| (\d+) MB \|$/gm),
    ].map(([, name, mb]) => [name, Number(mb)]);
    expect(enforced).toHaveLength(DOCKERFILES.length);
    expect(stated).toEqual(enforced);
  });
});
