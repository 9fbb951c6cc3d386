'use client';
// Facts (a definition list) and tables of the structured views (FHIR, HL7).
import type { Fact, Table } from '@/lib/view/viewer/fhir';

export function Facts({ facts, label }: { facts: Fact[]; label?: string }) {
  if (facts.length === 0) return null;
  return (
    <dl className="viewer-facts" aria-label={label}>
      {facts.map((f, i) => (
        <div key={i}>
          <dt>{f.label}</dt>
          <dd>{f.value}</dd>
        </div>
      ))}
    </dl>
  );
}

export function DataTable({ table }: { table: Table }) {
  return (
    <div className="table-scroll" tabIndex={0} role="region" aria-label={table.caption}>
      <table className="data-table">
        <caption>{table.caption}</caption>
        <thead>
          <tr>
            {table.columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {table.rows.map((row, r) => (
            <tr key={r}>
              {row.map((cell, i) => (
                <td key={i}>{cell}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
