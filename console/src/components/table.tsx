// Data tables: rows that open something are focusable, Enter opens them, and
// the arrow keys move between rows, so a list works without a mouse. A table
// wider than the screen scrolls sideways inside its own box (TableScroll), so
// the page never grows wider than the viewport and no column is cut off.
import type { KeyboardEvent, ReactNode } from 'react';
import { Empty } from './ui';
import type { Page } from '../api-types';
import type { CursorPages } from './paging';

export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
  className?: string;
}

function moveFocus(event: KeyboardEvent<HTMLTableRowElement>) {
  const row = event.currentTarget;
  const target =
    event.key === 'ArrowDown' || event.key === 'j'
      ? row.nextElementSibling
      : event.key === 'ArrowUp' || event.key === 'k'
        ? row.previousElementSibling
        : null;
  if (target instanceof HTMLElement) {
    event.preventDefault();
    target.focus();
  }
}

/** Nothing while loading, the `empty` note when there are no rows. */
export function Table<T>({
  rows,
  columns,
  rowKey,
  onOpen,
  selected,
  label,
  empty,
}: {
  rows: T[] | undefined;
  columns: Column<T>[];
  rowKey: (row: T) => string;
  onOpen?: (row: T) => void;
  selected?: string | null;
  label: string;
  empty: ReactNode;
}) {
  if (!rows) return null;
  if (rows.length === 0) return <Empty>{empty}</Empty>;
  return (
    <TableScroll>
      <table aria-label={label}>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.header} className={c.className}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => {
            const key = rowKey(row);
            return (
              <tr
                key={key}
                tabIndex={onOpen ? 0 : undefined}
                className={[onOpen ? 'clickable' : '', selected === key ? 'selected' : ''].join(' ')}
                aria-selected={selected === key || undefined}
                onClick={onOpen ? () => onOpen(row) : undefined}
                onKeyDown={onOpen ? (e) => (e.key === 'Enter' ? onOpen(row) : moveFocus(e)) : undefined}
              >
                {columns.map((c) => (
                  <td key={c.header} className={c.className}>
                    {c.cell(row)}
                  </td>
                ))}
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableScroll>
  );
}

/** The box a wide table scrolls in, sideways, instead of pushing the page wider. */
export function TableScroll({ children }: { children: ReactNode }) {
  return <div className="table-scroll">{children}</div>;
}

/** Previous and Next over keyset pages (useCursorPages); hidden when one page holds it all. */
export function Pager({ pages, list }: { pages: CursorPages; list: Page<unknown> | undefined }) {
  if (!list || (pages.page === 0 && !list.has_more)) return null;
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" className="secondary" disabled={pages.page === 0} onClick={pages.previous}>
        ← Previous
      </button>
      <span className="muted">
        Page {pages.page + 1} · {list.data.length} shown
      </span>
      <button type="button" className="secondary" disabled={!list.has_more} onClick={() => pages.next(list.next_cursor)}>
        Next →
      </button>
    </nav>
  );
}
