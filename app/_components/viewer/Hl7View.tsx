'use client';
// An HL7 v2 message: header, patient, results table, other segments with field names; the raw
// message one tap away. The reading is lib/view/viewer/hl7.ts.
import { useMemo, useState } from 'react';
import { readHl7 } from '@/lib/view/viewer/hl7';
import { Problem, RawText, RawToggle } from './Raw';
import { DataTable, Facts } from './Tables';

export function Hl7View({ text, name }: { text: string; name: string }) {
  const [raw, setRaw] = useState(false);
  const view = useMemo(() => readHl7(text), [text]);
  const { header, patient } = view;
  return (
    <>
      <RawToggle raw={raw} onChange={setRaw} rawLabel="Raw message" />
      {view.problems.map((p) => (
        <Problem key={p}>{p}</Problem>
      ))}
      {raw ? (
        // Segments end in \r, which a <pre> would not break on.
        <RawText text={text.replace(/\r\n?/g, '\n')} label={`Contents of ${name}`} />
      ) : (
        <>
          {header && (
            <section aria-label="Message">
              <h2>
                <span className="kind">HL7 {header.version}</span> {header.messageType || 'Message'}
                {header.sendingFacility && ` from ${header.sendingFacility}`}
              </h2>
              {header.time && <p className="viewer-meta">Sent {header.time}</p>}
            </section>
          )}
          {patient && (
            <section aria-label="Patient">
              <h2>Patient</h2>
              <Facts
                facts={[
                  { label: 'Name', value: patient.name },
                  { label: 'Identifiers', value: patient.identifiers.join('; ') },
                  { label: 'Born', value: patient.birthDate },
                  { label: 'Sex', value: patient.sex },
                  { label: 'Address', value: patient.address },
                ].filter((f) => f.value)}
              />
            </section>
          )}
          {view.orders.length > 0 && <p className="orders">Ordered: {view.orders.join('; ')}</p>}
          {view.results.length > 0 && (
            <DataTable
              table={{
                caption: 'Results',
                // The flag next to the value: on a phone the table scrolls, and it must not be off screen.
                columns: ['Test', 'Value', 'Unit', 'Flag', 'Reference range', 'Status'],
                rows: view.results.map((r) => [r.notes.length ? `${r.test} — ${r.notes.join(' ')}` : r.test, r.value, r.unit, r.flag, r.range, r.status]),
              }}
            />
          )}
          {header && (
            <details className="message-details">
              <summary>Message details</summary>
              <Facts
                facts={[
                  { label: 'Message type', value: header.messageType },
                  { label: 'Sending facility', value: header.sendingFacility },
                  { label: 'Sending application', value: header.sendingApplication },
                  { label: 'Receiving facility', value: header.receivingFacility },
                  { label: 'Sent', value: header.time },
                  { label: 'Control ID', value: header.controlId },
                ].filter((f) => f.value)}
              />
            </details>
          )}
          {view.segments.length > 0 && (
            <section aria-label="Other segments">
              <h2>Other segments</h2>
              {view.segments.map((s, i) => (
                <details key={i}>
                  <summary>{s.name}</summary>
                  <Facts facts={s.fields.map((f) => ({ label: f.name ? `${f.position} ${f.name}` : f.position, value: f.value }))} />
                </details>
              ))}
            </section>
          )}
        </>
      )}
    </>
  );
}
