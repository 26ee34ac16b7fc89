import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import {
  DOCKERFILE,
  chainEnv,
  copiedFrom,
  dockerfileText,
  imageTargets,
  parseDockerfile,
  stageChain,
} from '../deploy/support/dockerfile.js';

/*
 * What keeps the images buildable everywhere and their builds short, checked without building
 * them (`pnpm test:images` builds and runs them): no frontend image to fetch, one pinned base,
 * one build stage that every image's files come from (so they share its layers), one target per
 * image the image test builds, and the budgets the README states being the ones it enforces.
 * Each image's own properties (port, user, entrypoint, extras): test/deploy/compose.test.ts.
 */

const read = (file: string) => readFileSync(file, 'utf8');
const { global, stages } = parseDockerfile();
/** Not searched for Dockerfiles: dependencies, build output, version control, local state. */
const SKIPPED = new Set([
  'node_modules',
  'dist',
  '.git',
  '.tmp',
  '.data',
  '.artifacts',
  '.bench',
  '.faults',
]);

/** The images test/images/run.sh builds (each the Dockerfile's target of that name) and budgets. */
const enforced = [...read('test/images/run.sh').matchAll(/^ {2}"([\w-]+) (\d+)"$/gm)].map(
  ([, name, mb]) => [name!, Number(mb)] as const,
);
const TARGETS = enforced.map(([name]) => name);

describe('the Dockerfile', () => {
  it('needs no frontend image: no `# syntax` directive (BuildKit fetches it from Docker Hub)', () => {
    expect(/^#\s*syntax\s*=/im.test(dockerfileText())).toBe(false);
  });

  it('builds every stage on one digest-pinned Node LTS base, or on an earlier stage', () => {
    const args = global.filter((i) => i.startsWith('ARG NODE_IMAGE='));
    expect(args).toHaveLength(1);
    expect(args[0]).toMatch(/^ARG NODE_IMAGE=node:(22|24)[\w.-]*@sha256:[0-9a-f]{64}$/);
    for (const [i, stage] of stages.entries()) {
      const earlier = stages.slice(0, i).map((s) => s.name);
      expect([stage.name, stage.base === '${NODE_IMAGE}' || earlier.includes(stage.base)]).toEqual([
        stage.name,
        true,
      ]);
    }
    expect(new Set(stages.map((s) => s.name)).size).toBe(stages.length);
  });

  it('has one target per image the image test builds, and no other final stage', () => {
    expect(TARGETS).toEqual(['billing', 'dispatcher', 'inference-worker', 'edge', 'stand-ins']);
    expect([...imageTargets(stages)].sort()).toEqual([...TARGETS].sort());
  });

  it("takes every image's files from the one build stage, which compiles every image", () => {
    const build = stages[0]!;
    expect(build.name).toBe('build');
    for (const target of TARGETS) {
      const [files, ...more] = copiedFrom(stages, target);
      expect([target, more]).toEqual([target, []]);
      expect([target, stageChain(stages, files!)[0]!.name]).toEqual([target, 'build']);
    }
    // The lockfile alone before the sources: the fetched packages stay cached until it changes.
    const order = ['COPY pnpm-lock.yaml pnpm-workspace.yaml ./', 'RUN pnpm fetch', 'COPY . .'].map(
      (i) => build.instructions.indexOf(i),
    );
    expect(order[0]).toBeGreaterThanOrEqual(0);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    const compile = build.instructions.find((line) => line.includes('tsc -b'))!;
    for (const project of [
      'services/billing',
      'services/dispatcher',
      'services/edge',
      'services/inference-worker',
      'packages/stand-ins',
    ]) {
      expect(compile.split(' ')).toContain(project);
    }
    // Nothing image-specific in it: no deploy, no dashboard build, no pruning.
    expect(build.instructions.join('\n')).not.toMatch(/ deploy | run build|prune-deploy/);
  });

  // The bench reads these lines (infra/bench/allocator-env.mjs) and runs its services with them.
  it("runs each service with glibc's allocator settings (ADR 0071)", () => {
    for (const target of ['billing', 'dispatcher', 'inference-worker', 'edge']) {
      expect([target, chainEnv(stages, target)]).toEqual([
        target,
        expect.objectContaining({ MALLOC_ARENA_MAX: '2', MALLOC_TRIM_THRESHOLD_: '1048576' }),
      ]);
    }
  });

  it('is the only Dockerfile in the repository: no copy to keep in step', () => {
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (SKIPPED.has(entry.name)) continue;
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(file);
        else if (/(^|\.)(Dockerfile|Containerfile)$/.test(entry.name)) found.push(file);
      }
    };
    walk('.');
    expect(found).toEqual([DOCKERFILE]);
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
    const stated = [
      ...read('README.md').matchAll(/^\| `([\w-]+)`\s*\| \d+ MB\s*\| (\d+) MB \|$/gm),
    ].map(([, name, mb]) => [name, Number(mb)]);
    expect(enforced).toHaveLength(TARGETS.length);
    expect(stated).toEqual(enforced);
  });
});
