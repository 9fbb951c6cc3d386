'use client';
// A sortable table (TanStack Table) whose rows are virtualised (TanStack Virtual) AND windowed: the
// screen hands in only the rows around what is on screen (`rows`, starting at list index `start`)
// and the list's length (`total`); the table tells the screen which range is visible
// (`onVisibleRange`) so it can read the next window from IndexedDB. Sorting is the screen's too
// (`sorting`): the rows arrive in order. Rows are a CSS grid with ARIA table roles, as tall as
// their content (a long name wraps): each is measured once laid out, rows not yet read are
// estimated at `rowHeight` (ROW_HEIGHT unless told). The scroller tells the screen how far it is
// scrolled (`onScroll`: the header folds away) and, on touch, a pull down from its top asks for a
// sync (`onRefresh`).
import { rowSortingFeature, tableFeatures, useTable, type ColumnDef, type SortingState } from '@tanstack/react-table';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import { useNarrow } from './useNarrow';
import { PullToRefresh } from './PullToRefresh';

export const features = tableFeatures({ rowSortingFeature });
/** `width`: a CSS grid track (every row is its own grid, so widths must not depend on content). */
export type Column<Row extends object> = ColumnDef<typeof features, Row> & { meta?: { className?: string; width?: string } };

const ROW_HEIGHT = 56;
const OVERSCAN = 8;

export function VirtualTable<Row extends { id: string }>({
  label,
  rows,
  start,
  total,
  columns: allColumns,
  empty,
  rowClassName,
  sorting,
  onSortingChange,
  onVisibleRange,
  onScroll,
  onRefresh,
  rowHeight = ROW_HEIGHT,
}: {
  label: string;
  /** The loaded window of the list, in order. */
  rows: Row[];
  /** List index of rows[0]. */
  start: number;
  /** Rows in the whole list. */
  total: number;
  columns: Column<Row>[];
  empty: ReactNode;
  rowClassName?: (row: Row) => string;
  sorting: SortingState;
  onSortingChange(next: SortingState): void;
  /** The rows on screen changed: [first, last] list indexes (inclusive). */
  onVisibleRange(first: number, last: number): void;
  /** The list was scrolled (its scroller, to read scrollTop and how far it can go). */
  onScroll?(scroller: HTMLDivElement): void;
  /** Pull to refresh: called when a pull from the top is let go far enough down. */
  onRefresh?(): Promise<unknown>;
  /** A row's least height, and the estimate of rows not laid out yet (px). */
  rowHeight?: number;
}) {
  const narrow = useNarrow();
  const columns = narrow ? allColumns.filter((c) => !c.meta?.className?.includes('wide-only')) : allColumns;
  const table = useTable({
    features,
    columns,
    data: rows,
    getRowId: (row: Row) => row.id,
    manualSorting: true,
    enableSortingRemoval: true,
    state: { sorting },
    onSortingChange: (updater) => onSortingChange(typeof updater === 'function' ? updater(sorting) : updater),
  });
  const model = table.getRowModel().rows;
  const scroller = useRef<HTMLDivElement>(null);
  // The rows on screen first; those just outside it (the overscan, there so a scroll finds them
  // drawn) once the first ones are painted: on the first screen they were 8 of 19 rows rendered
  // before anything showed (issue 30).
  const [overscan, setOverscan] = useState(0);
  // Measured sizes belong to a row, not to a place in the list: when rows move (a pin, a new
  // order, a search), a row keeps its height and the one now in its place is not given it.
  const getItemKey = useCallback((index: number) => rows[index - start]?.id ?? `at-${index}`, [rows, start]);
  const virtual = useVirtualizer({
    count: total,
    getScrollElement: () => scroller.current,
    estimateSize: () => rowHeight,
    getItemKey,
    // A row's height comes from the ResizeObserver's entry (read after the browser's own layout),
    // never from offsetHeight in a ref callback: that forces a layout in the middle of React's
    // commit, row after row, and tripled the first screen's blocking time. Until its entry
    // arrives, a row keeps the height it had (or the estimate).
    measureElement: (element, entry, instance) => {
      const box = entry?.borderBoxSize?.[0];
      if (box) return Math.round(box.blockSize);
      return instance.itemSizeCache.get(instance.options.getItemKey(instance.indexFromElement(element))) ?? rowHeight;
    },
    overscan,
  });
  const items = virtual.getVirtualItems();
  const shown = items.length > 0;
  useEffect(() => {
    if (!shown || overscan === OVERSCAN) return;
    // After the frame that paints them (a rAF runs before it, the timeout after it).
    let timer: ReturnType<typeof setTimeout> | undefined;
    const frame = requestAnimationFrame(() => {
      timer = setTimeout(() => setOverscan(OVERSCAN));
    });
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, [shown, overscan]);
  const first = items[0]?.index ?? 0;
  const last = items.at(-1)?.index ?? 0;
  const report = useRef(onVisibleRange);
  report.current = onVisibleRange;
  useEffect(() => {
    report.current(first, last);
  }, [first, last]);
  const template = columns.map((c) => c.meta?.width ?? 'minmax(6rem, 1fr)').join(' ');

  return (
    // The pull indicator is beside the table, not in it: a table owns rows only.
    <div className="vtable-frame">
      {onRefresh && <PullToRefresh scroller={scroller} onRefresh={onRefresh} />}
      <div className="vtable" role="table" aria-label={label} aria-rowcount={total + 1}>
        <div className="vtable-head" role="rowgroup">
          <div className="vtable-row" role="row" style={{ gridTemplateColumns: template }}>
            {table.getHeaderGroups()[0].headers.map((header) => {
              const sorted = header.column.getIsSorted();
              const className = (header.column.columnDef as Column<Row>).meta?.className ?? '';
              return (
                <div
                  key={header.id}
                  role="columnheader"
                  className={`vtable-cell ${className}`}
                  aria-sort={sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : 'none'}
                >
                  {header.column.getCanSort() ? (
                    <button type="button" className="sort" onClick={header.column.getToggleSortingHandler()}>
                      <table.FlexRender header={header} />
                      <span aria-hidden="true">{sorted === 'asc' ? ' ▲' : sorted === 'desc' ? ' ▼' : ''}</span>
                    </button>
                  ) : (
                    <table.FlexRender header={header} />
                  )}
                </div>
              );
            })}
          </div>
        </div>
        {/* A rowgroup must own rows: the empty state is one row, and before the first rows are laid out the group says it is busy. */}
        <div
          ref={scroller}
          className="vtable-body"
          role="rowgroup"
          aria-busy={total > 0 && items.length === 0 ? true : undefined}
          onScroll={onScroll && ((e) => onScroll(e.currentTarget))}
        >
          {total === 0 ? (
            <div role="row" className="empty-row">
              <div role="cell" className="empty">
                {empty}
              </div>
            </div>
          ) : (
            <div style={{ height: virtual.getTotalSize(), position: 'relative' }}>
              {items.map((item) => {
                const row = model[item.index - start];
                const style = { gridTemplateColumns: template, position: 'absolute' as const, top: 0, left: 0, right: 0, minHeight: rowHeight, transform: `translateY(${item.start}px)` };
                if (!row) {
                  // Not read yet (scrolled past the loaded window): a placeholder of the same height.
                  return <div key={`pending-${item.index}`} role="row" aria-rowindex={item.index + 2} aria-busy="true" className="vtable-row loading" style={{ ...style, height: rowHeight }} />;
                }
                return (
                  <div key={row.id} ref={virtual.measureElement} data-index={item.index} role="row" aria-rowindex={item.index + 2} className={`vtable-row ${rowClassName?.(row.original) ?? ''}`} style={style}>
                    {row.getAllCells().map((cell) => (
                      <div key={cell.id} role="cell" className={`vtable-cell ${(cell.column.columnDef as Column<Row>).meta?.className ?? ''}`}>
                        <table.FlexRender cell={cell} />
                      </div>
                    ))}
                  </div>
                );
              })}
            </div>
          )}
        </div>
      </div>
    </div>
  );
}
