'use client';
// An HL7 message's results: on a phone one card per result (test; value, unit and flag; range and
// status), nothing wider than the screen; on a wide screen a table. Flags are FlagBadge (words
// and symbol, then colour). The reading is lib/view/viewer/hl7.ts.
import type { Hl7Result } from '@/lib/view/viewer/hl7';
import { useNarrow } from '../useNarrow';
import { FlagBadge, flagClass } from './FlagBadge';

export function Hl7Results({ results, eachCollected }: { results: Hl7Result[]; eachCollected: boolean }) {
  return useNarrow() ? <ResultCards results={results} eachCollected={eachCollected} /> : <ResultsTable results={results} eachCollected={eachCollected} />;
}

function ResultCards({ results, eachCollected }: { results: Hl7Result[]; eachCollected: boolean }) {
  return (
    <ol className="result-cards" aria-label="Results">
      {results.map((r, i) => (
        <li key={i} className={`result-card ${flagClass(r.flag)}`}>
          <p className="result-test">{r.test}</p>
          <p className="result-value">
            <span className="value">{r.value}</span>
            {r.unit && <span className="unit"> {r.unit}</span>}
            {r.flag && (
              <>
                {' '}
                <FlagBadge flag={r.flag} />
              </>
            )}
          </p>
          <dl className="result-facts">
            {r.range && (
              <div>
                <dt>Range</dt>
                <dd>{r.range}</dd>
              </div>
            )}
            {r.status && (
              <div>
                <dt>Status</dt>
                <dd>{r.status}</dd>
              </div>
            )}
            {eachCollected && r.collected && (
              <div>
                <dt>Collected</dt>
                <dd>{r.collected}</dd>
              </div>
            )}
          </dl>
          {r.notes.length > 0 && <p className="result-notes">{r.notes.join('\n')}</p>}
        </li>
      ))}
    </ol>
  );
}

function ResultsTable({ results, eachCollected }: { results: Hl7Result[]; eachCollected: boolean }) {
  const columns = ['Test', 'Value', 'Unit', 'Flag', 'Reference range', 'Status', ...(eachCollected ? ['Collected'] : [])];
  return (
    <div className="table-scroll" tabIndex={0} role="region" aria-label="Results">
      <table className="data-table results-table">
        <caption>Results</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {results.map((r, i) => (
            <tr key={i} className={flagClass(r.flag)}>
              <td>
                {r.test}
                {r.notes.length > 0 && <p className="result-notes">{r.notes.join('\n')}</p>}
              </td>
              <td className="value">{r.value}</td>
              <td>{r.unit}</td>
              <td>{r.flag && <FlagBadge flag={r.flag} />}</td>
              <td>{r.range}</td>
              <td>{r.status}</td>
              {eachCollected && <td>{r.collected}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
