'use client';
// JSON files: a FHIR resource as its summary (lib/view/viewer/fhir.ts), any other JSON as a field
// tree; raw JSON one tap away; invalid JSON says where it breaks and shows the text. A Bundle's
// entries are in order of what needs attention (lib), each titled once: by the line that opens it.
import { useMemo, useState } from 'react';
import { isResource, summarise, type Summary } from '@/lib/view/viewer/fhir';
import { parseJson } from '@/lib/view/viewer/text';
import { treeOf, type TreeNode } from '@/lib/view/viewer/tree';
import { FlagBadge, flagClass } from './FlagBadge';
import { Problem, RawText, RawToggle } from './Raw';
import { DataTable, Facts } from './Tables';

export function JsonView({ text, name, complete }: { text: string; name: string; complete: boolean }) {
  const [raw, setRaw] = useState(false);
  const parsed = useMemo(() => (complete ? parseJson(text) : null), [text, complete]);
  if (!parsed) {
    return (
      <>
        <Problem>This file is too large to read as a summary here; the beginning of its text is shown.</Problem>
        <RawText text={text} label={`Contents of ${name}`} />
      </>
    );
  }
  if (!parsed.ok) {
    return (
      <>
        <Problem>
          This file is not valid JSON ({parsed.where})
          {parsed.resourceType ? `, so the FHIR ${parsed.resourceType} in it cannot be shown as a summary` : ''}. Its text is shown as it is.
        </Problem>
        <RawText text={text} label={`Contents of ${name}`} />
      </>
    );
  }
  return (
    <>
      <RawToggle raw={raw} onChange={setRaw} rawLabel="Raw JSON" />
      {raw ? (
        <RawText text={text} label={`Contents of ${name}`} />
      ) : isResource(parsed.value) ? (
        <FhirSummary summary={summarise(parsed.value)} level={2} />
      ) : (
        <ul className="tree" aria-label="Fields">
          <TreeItem node={treeOf('JSON', parsed.value)} open />
        </ul>
      )}
    </>
  );
}

/** A resource's summary; an entry of a Bundle (level 3) is titled by its entry's line, not again here. */
function FhirSummary({ summary, level }: { summary: Summary; level: 2 | 3 }) {
  return (
    <section className="fhir-summary" aria-label={`${summary.resourceType}: ${summary.title}`}>
      {level === 2 && (
        <h2 className="resource-title">
          <span className="kind">{summary.resourceType}</span> {summary.title}
        </h2>
      )}
      <Facts facts={summary.facts} />
      {summary.tables.map((t) => (
        <DataTable key={t.caption} table={t} />
      ))}
      {summary.raw !== undefined && (
        <ul className="tree" aria-label="Fields">
          <TreeItem node={treeOf(summary.resourceType, summary.raw)} open={level === 2} />
        </ul>
      )}
      {summary.entries && (
        <ol className="bundle-entries" aria-label="Entries">
          {summary.entries.map((entry, i) => (
            <li key={i}>
              <details open={i < 20}>
                <summary>
                  <span className="kind">{entry.resourceType}</span> {entry.title}
                  {entry.flag && flagClass(entry.flag) && (
                    <>
                      {' '}
                      <FlagBadge flag={entry.flag} />
                    </>
                  )}
                </summary>
                <FhirSummary summary={entry} level={3} />
              </details>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

/** A node of the field tree; its children are built only once it is opened. */
function TreeItem({ node, open = false }: { node: TreeNode; open?: boolean }) {
  const [shown, setShown] = useState(open);
  if (!node.children) {
    return (
      <li>
        <span className="tree-key">{node.label}</span> <span className="tree-value">{node.value}</span>
      </li>
    );
  }
  return (
    <li>
      <details open={open} onToggle={(e) => setShown(e.currentTarget.open)}>
        <summary>
          <span className="tree-key">{node.label}</span> <span className="tree-size">{node.size}</span>
        </summary>
        {shown && (
          <ul>
            {node.children().map((child, i) => (
              <TreeItem key={i} node={child} />
            ))}
          </ul>
        )}
      </details>
    </li>
  );
}
