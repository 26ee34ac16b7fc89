import { readFileSync } from 'node:fs';

/*
 * The repository's Dockerfile, read as a builder reads it, for the parts the tests check: its
 * stages (`FROM <base> AS <name>`), what each image target is made of (its own instructions and
 * those of the stages it is built FROM), and the stage it copies its files from.
 */

export const DOCKERFILE = 'Dockerfile';

export interface Stage {
  name: string;
  /** What the stage is built FROM: `${NODE_IMAGE}` or an earlier stage's name. */
  base: string;
  /** Its instructions, continuation lines joined, whitespace collapsed, comments dropped. */
  instructions: string[];
}

export const dockerfileText = (file = DOCKERFILE) => readFileSync(file, 'utf8');

/** The instructions before the first FROM and each stage's, in order. */
export function parseDockerfile(file = DOCKERFILE): { global: string[]; stages: Stage[] } {
  const lines = dockerfileText(file)
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter((line) => line && !line.startsWith('#'));
  const global: string[] = [];
  const stages: Stage[] = [];
  for (const line of lines) {
    const from = /^FROM (?:--platform=\S+ )?(\S+)(?: AS (\S+))?$/i.exec(line);
    if (from) {
      stages.push({ name: from[2] ?? String(stages.length), base: from[1]!, instructions: [] });
    } else if (/^FROM\s/i.test(line)) {
      throw new Error(`${file}: unexpected ${line}`);
    } else (stages.at(-1)?.instructions ?? global).push(line);
  }
  return { global, stages };
}

/** A stage and the stages it is built FROM, the first one (FROM an image) first. */
export function stageChain(stages: Stage[], name: string): Stage[] {
  const index = stages.findIndex((s) => s.name === name);
  if (index < 0) throw new Error(`the Dockerfile has no stage ${name}`);
  const stage = stages[index]!;
  // A stage can only be built FROM an earlier one; anything else is an image.
  const parent = stages.slice(0, index).find((s) => s.name === stage.base);
  return parent ? [...stageChain(stages, parent.name), stage] : [stage];
}

/** What a stage's image is made of: its instructions after those of the stages below it. */
export const chainInstructions = (stages: Stage[], name: string): string[] =>
  stageChain(stages, name).flatMap((s) => s.instructions);

/** The stages `COPY --from=` names in a stage's chain. */
export const copiedFrom = (stages: Stage[], name: string): string[] =>
  chainInstructions(stages, name).flatMap((i) => /^COPY --from=(\S+) /.exec(i)?.[1] ?? []);

/** The image targets: stages that no other stage is built FROM or copies from. */
export function imageTargets(stages: Stage[]): string[] {
  const used = new Set(
    stages.flatMap((s) => [
      s.base,
      ...s.instructions.flatMap((i) => /^COPY --from=(\S+) /.exec(i)?.[1] ?? []),
    ]),
  );
  return stages.map((s) => s.name).filter((name) => !used.has(name));
}

/** `ENV A=1 B=2` instructions of a stage's chain, as one map (later ones win). */
export function chainEnv(stages: Stage[], name: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const instruction of chainInstructions(stages, name)) {
    if (!instruction.startsWith('ENV ')) continue;
    for (const [, key, quoted, bare] of instruction
      .slice(4)
      .matchAll(/(\w+)=(?:"([^"]*)"|(\S*))/g)) {
      env[key!] = quoted ?? bare ?? '';
    }
  }
  return env;
}

/** The last instruction of a kind in a stage's chain (USER, ENTRYPOINT, CMD…), without the keyword. */
export function lastOf(stages: Stage[], name: string, keyword: string): string | undefined {
  const found = chainInstructions(stages, name)
    .filter((i) => i.startsWith(`${keyword} `))
    .at(-1);
  return found?.slice(keyword.length + 1);
}
