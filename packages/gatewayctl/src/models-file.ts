import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { usageError } from './errors.js';

export interface ModelSpec {
  id: string;
  body: Record<string, unknown>;
}

const MAX_FILE_BYTES = 1_000_000;

/**
 * Reads models from a YAML or JSON file (JSON is YAML): one model object with an `id`, a list
 * of them, or `{models: [...]}`. The body sent is the object without its `id`.
 */
export async function readModelsFile(path: string): Promise<ModelSpec[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw usageError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  if (text.length > MAX_FILE_BYTES) throw usageError(`${path} is larger than 1 MB`);
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    throw usageError(`${path} is not valid YAML or JSON: ${(error as Error).message}`);
  }
  const list = Array.isArray(document)
    ? document
    : Array.isArray((document as { models?: unknown })?.models)
      ? (document as { models: unknown[] }).models
      : [document];
  return list.map((item, index) => {
    if (
      typeof item !== 'object' ||
      item === null ||
      typeof (item as { id?: unknown }).id !== 'string'
    ) {
      throw usageError(`${path}: model #${index + 1} needs a string "id"`);
    }
    const { id, ...body } = item as { id: string } & Record<string, unknown>;
    return { id, body };
  });
}
