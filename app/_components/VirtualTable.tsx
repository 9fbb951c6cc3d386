'use client';
// A sortable table (TanStack Table) whose rows are virtualised (TanStack Virtual): only the rows
// on screen are in the DOM, so 10,000 rows scroll like 10. Rows are a CSS grid with ARIA table roles.
import { createSortedRowModel, rowSortingFeature, sortFns, tableFeatures, useTable, type ColumnDef } from '@tanstack/react-table';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useRef, type ReactNode } from 'react';
import { useNarrow } from './useNarrow';

export const features = tableFeatures({ rowSortingFeature, sortedRowModel: createSortedRowModel(), sortFns });
/** `width`: a CSS grid track (every row is its own grid, so widths must not depend on content). */
export type Column<Row extends Record<string, any>> = ColumnDef<typeof features, Row> & { meta?: { className?: string; width?: string } };

const ROW_HEIGHT = 56;
export function VirtualTable<Row extends Record<string, any> & { id: string }>({
  label,
  rows,
  columns: allColumns,
  empty,
  rowClassName,
}: {
  label: string;
  rows: Row[];
  columns: Column<Row>[];
  empty: ReactNode;
  rowClassName?: (row: Row) => string;
}) {
  const narrow = useNarrow();
  const columns = narrow ? allColumns.filter((c) => !c.meta?.className?.includes('wide-only')) : allColumns;
  const table = useTable({ features, columns, data: rows, getRowId: (row: Row) => row.id });
  const model = table.getRowModel().rows;
  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({
    count: model.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 8,
  });
  const template = columns.map((c) => c.meta?.width ?? 'minmax(6rem, 1fr)').join(' ');

  return (
    <div className="vtable" role="table" aria-label={label} aria-rowcount={model.length + 1}>
      <div className="vtable-head" role="rowgroup">
        <div className="vtable-row" role="row" style={{ gridTemplateColumns: template }}>
          {table.getHeaderGroups()[0]!.headers.map((header) => {
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
      <div ref={scroller} className="vtable-body" role="rowgroup">
        {model.length === 0 ? (
          <div className="empty">{empty}</div>
        ) : (
          <div style={{ height: virtual.getTotalSize(), position: 'relative' }}>
            {virtual.getVirtualItems().map((item) => {
              const row = model[item.index]!;
              return (
                <div
                  key={row.id}
                  role="row"
                  aria-rowindex={item.index + 2}
                  className={`vtable-row ${rowClassName?.(row.original) ?? ''}`}
                  style={{ gridTemplateColumns: template, position: 'absolute', top: 0, left: 0, right: 0, height: ROW_HEIGHT, transform: `translateY(${item.start}px)` }}
                >
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
  );
}
