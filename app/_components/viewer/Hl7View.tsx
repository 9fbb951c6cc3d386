'use client';
// An HL7 v2 message: header with when the sample was collected, patient, results (cards on a
// phone, a table on a wide screen) with how many are abnormal, other segments with field names;
// the raw message one tap away. The reading is lib/view/viewer/hl7.ts.
import { useMemo, useState } from 'react';
import { readHl7, resultsSummary } from '@/lib/view/viewer/hl7';
import { Hl7Results } from './Hl7Results';
import { Problem, RawText, RawToggle } from './Raw';
import { Facts } from './Tables';

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
              <p className="viewer-meta">
                {/* When the sample was taken is what a result is read against; when it was sent, second. */}
                {view.collected.length === 1 && <>Collected {view.collected[0]}</>}
                {view.collected.length > 1 && <>Collected at {view.collected.length} times (with each result)</>}
                {view.collected.length > 0 && header.time && ' · '}
                {header.time && <>Sent {header.time}</>}
              </p>
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
          {view.orders.length > 0 && (
            <p className="orders">
              Ordered: {view.orders.map((o) => (view.collected.length > 1 && o.collected ? `${o.test} (collected ${o.collected})` : o.test)).join('; ')}
            </p>
          )}
          {view.results.length > 0 && (
            <>
              <p className={view.critical > 0 ? 'results-summary critical' : 'results-summary'}>{resultsSummary(view)}</p>
              <Hl7Results results={view.results} eachCollected={view.collected.length > 1} />
            </>
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
