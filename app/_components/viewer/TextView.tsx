'use client';
import { useMemo, useState } from 'react';
import { parseCsv } from '@/lib/view/viewer/csv';
import { Problem, RawText, RawToggle } from './Raw';

export function TextView({ text, name }: { text: string; name: string }) {
  return <RawText text={text} label={`Contents of ${name}`} />;
}

export function CsvView({ text, name }: { text: string; name: string }) {
  const [raw, setRaw] = useState(false);
  const table = useMemo(() => parseCsv(text), [text]);
  const [head, ...body] = table.rows;
  return (
    <>
      <RawToggle raw={raw} onChange={setRaw} rawLabel="Raw text" />
      {table.problem && <Problem>{table.problem}</Problem>}
      {raw || !head ? (
        <RawText text={text} label={`Contents of ${name}`} />
      ) : (
        <div className="table-scroll" tabIndex={0} role="region" aria-label={`Table of ${name}`}>
          <table className="data-table">
            <thead>
              <tr>
                {head.map((cell, i) => (
                  <th key={i} scope="col">
                    {cell}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {body.map((row, r) => (
                <tr key={r}>
                  {row.map((cell, i) => (
                    <td key={i}>{cell}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {table.more && !raw && <Problem>Only the first {table.rows.length.toLocaleString('en')} rows are shown.</Problem>}
    </>
  );
}
