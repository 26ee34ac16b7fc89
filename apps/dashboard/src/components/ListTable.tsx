import { Table } from '@mantine/core';
import type { ReactNode } from 'react';

/**
 * Mantine's table with a header row, scrolling sideways below `minWidthPx` (phones) rather
 * than squeezing its columns.
 */
export function ListTable({
  headers,
  minWidthPx,
  children,
}: {
  headers: readonly string[];
  minWidthPx: number;
  children: ReactNode;
}) {
  return (
    <Table.ScrollContainer minWidth={minWidthPx}>
      <Table verticalSpacing="sm" highlightOnHover>
        <Table.Thead>
          <Table.Tr>
            {headers.map((header, index) => (
              <Table.Th key={`${index}-${header}`}>{header}</Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>{children}</Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
