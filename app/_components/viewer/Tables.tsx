'use client';
// Facts (a definition list) and tables of the structured views (FHIR, HL7). A fact or a row with a
// flag shows it (FlagBadge): beside the value, or in the table's flag column.
import type { Fact, Table } from '@/lib/view/viewer/fhir';
import { FlagBadge, flagClass } from './FlagBadge';

export function Facts({ facts, label }: { facts: Fact[]; label?: string }) {
  if (facts.length === 0) return null;
  return (
    <dl className="viewer-facts" aria-label={label}>
      {facts.map((f, i) => (
        <div key={i} className={flagClass(f.flag)}>
          <dt>{f.label}</dt>
          <dd>
            {f.flag && flagClass(f.flag) ? <strong>{f.value}</strong> : f.value}
            {f.flag && (
              <>
                {f.value && ' '}
                <FlagBadge flag={f.flag} />
              </>
            )}
          </dd>
        </div>
      ))}
    </dl>
  );
}

export function DataTable({ table }: { table: Table }) {
  const flagAt = table.flagColumn ? table.columns.indexOf(table.flagColumn) : -1;
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
          {table.rows.map((row, r) => {
            const flag = table.flags?.[r];
            return (
              <tr key={r} className={flagClass(flag)}>
                {row.map((cell, i) => (
                  <td key={i}>{i === flagAt && flag ? <FlagBadge flag={flag} /> : cell}</td>
                ))}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
