import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/*
 * One name, one shape: a service may not export a type under a name the contracts already give
 * to a wire shape. Billing's ledger had its own `Statement` (bigint amounts, Dates) beside the
 * contracts' `Statement` (digit strings, ISO instants); a reader, or an import completed by the
 * editor, took one for the other. A service's own shape gets its own name (`LedgerStatement`).
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SERVICES = ['billing', 'edge', 'inference-worker', 'dispatcher'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The names of the interfaces and type aliases `file` exports at its top level. */
function exportedTypeNames(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  return source.statements.flatMap((statement) => {
    const declares = ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement);
    const exported = ts
      .getModifiers(statement as ts.HasModifiers)
      ?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword);
    return declares && exported ? [statement.name.text] : [];
  });
}

describe('type names', () => {
  const contractNames = new Set(
    sourceFiles(join(ROOT, 'packages/contracts/src')).flatMap(exportedTypeNames),
  );

  it('reads the contracts’ type names', () => {
    // A parser that found nothing would pass the check below vacuously.
    expect(contractNames.has('Statement')).toBe(true);
    expect(contractNames.has('CatalogModel')).toBe(true);
  });

  it.each(SERVICES)('%s exports no type under a contract’s name', (service) => {
    const clashes = sourceFiles(join(ROOT, 'services', service, 'src')).flatMap((file) =>
      exportedTypeNames(file)
        .filter((name) => contractNames.has(name))
        .map((name) => `${relative(ROOT, file)}: ${name}`),
    );
    expect(clashes).toEqual([]);
  });
});
