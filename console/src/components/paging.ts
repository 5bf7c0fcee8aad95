// Keyset paging state: the cursor of each page seen, so Previous goes back
// without offsets. Any change of filters starts again from the first page.
import { useEffect, useState } from 'react';
import { useSearchParams } from 'react-router';

export type CursorPages = ReturnType<typeof useCursorPages>;

export function useCursorPages(resetKey: string) {
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  useEffect(() => setCursors([undefined]), [resetKey]);
  return {
    cursor: cursors[cursors.length - 1],
    page: cursors.length - 1,
    next: (cursor: string | null) => cursor && setCursors((list) => [...list, cursor]),
    previous: () => setCursors((list) => (list.length > 1 ? list.slice(0, -1) : list)),
  };
}

/** Filters kept in the URL's query string: a view can be shared, and survives a reload. */
export function useUrlFilters<N extends string>(names: readonly N[]) {
  const [params, setParams] = useSearchParams();
  const values = Object.fromEntries(names.map((name) => [name, params.get(name) ?? ''])) as Record<N, string>;
  const set = (name: N, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    setParams(next, { replace: true });
  };
  return { values, set };
}
