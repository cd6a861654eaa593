import type { ComponentChildren, JSX } from 'preact';
import { useState } from 'preact/hooks';
import { apiPage, type Pagination } from '../api';
import { ErrorBox, Loading, Table, useInterval, useLoad } from './ui';

/**
 * A list of the API as a table, a page at a time (the API's cursors): loading, errors, the empty
 * state that says what to do first, and, while `pollWhile` holds, a refresh every few seconds.
 */
export function PagedTable<T>({
  path,
  what,
  columns,
  row,
  empty,
  pollWhile,
}: {
  path: string;
  what: string;
  /** Column headings; an empty one is an actions column (named for screen readers). */
  columns: string[];
  row: (item: T) => JSX.Element;
  empty: ComponentChildren;
  pollWhile?: (items: T[]) => boolean;
}) {
  const [cursor, setCursor] = useState<string>();
  const page = useLoad((signal) => apiPage<T>(`${path}?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, signal), [path, cursor]);
  useInterval(page.reload, 3000, !!page.value && !!pollWhile?.(page.value.items));
  const items = page.value?.items;
  return (
    <>
      <ErrorBox error={page.error} />
      {page.loading && !items ? <Loading what={what} /> : null}
      {items && items.length === 0 && !cursor ? empty : null}
      {items && items.length > 0 ? (
        <>
          <Table columns={columns}>{items.map(row)}</Table>
          <Pager pagination={page.value!.pagination} onNext={setCursor} onFirst={cursor ? () => setCursor(undefined) : undefined} />
        </>
      ) : null}
    </>
  );
}

function Pager({ pagination, onNext, onFirst }: { pagination: Pagination; onNext: (cursor: string) => void; onFirst?: () => void }) {
  if (!pagination.hasMore && !onFirst) return null;
  return (
    <div class="pager">
      {onFirst ? (
        <button type="button" class="secondary" onClick={onFirst}>
          First page
        </button>
      ) : null}
      {pagination.hasMore && pagination.nextCursor ? (
        <button type="button" class="secondary" onClick={() => onNext(pagination.nextCursor!)}>
          Next page
        </button>
      ) : null}
    </div>
  );
}
