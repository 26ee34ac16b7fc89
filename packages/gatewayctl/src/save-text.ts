import { writeFile } from 'node:fs/promises';
import { CliError, EXIT } from './errors.js';
import { show, type Output } from './output.js';

/**
 * A downloaded text (a CSV) to `--out FILE`, or to standard output without it. An unwritable
 * file is a usage error naming it, not a stack trace.
 */
export async function saveText(
  out: Output,
  file: string | undefined,
  text: string,
  what: string,
): Promise<void> {
  if (!file) return void out.write(text);
  await writeFile(file, text).catch((error: NodeJS.ErrnoException) => {
    throw new CliError(`cannot write ${file}: ${error.code ?? error.message}`, EXIT.usage);
  });
  show(
    out,
    { written: file, bytes: Buffer.byteLength(text) },
    () => `${what} written to ${file}\n`,
  );
}
