// An icon per kind of file (PDF, image, FHIR, HL7, CSV, JSON, text, other) for the file lists, so
// a PDF can be told from a photo at a glance. Kept out of Icon.tsx: the first screen (conversations)
// has no file list and should not carry these paths.
import type { ViewKind } from '@/lib/view/viewer/kind';

const PAGE = 'M6 3h8l4 4v14H6zM14 3v4h4';
const LABEL: Partial<Record<ViewKind, string>> = { pdf: 'PDF', fhir: 'FHIR', hl7: 'HL7', csv: 'CSV', json: '{ }' };

/** `waiting`: its thumbnail waits for a connection that allows fetching it (data-thumbnail="waiting"). */
export function FileKindIcon({ kind, size = 18, waiting = false }: { kind: ViewKind; size?: number; waiting?: boolean }) {
  const label = LABEL[kind];
  return (
    <svg className={`kind-icon kind-${kind}`} data-thumbnail={waiting ? 'waiting' : undefined} width={size} height={size} viewBox="0 0 24 24" aria-hidden="true" focusable="false" fill="none" stroke="currentColor" strokeWidth={2} strokeLinecap="round" strokeLinejoin="round">
      {kind === 'image' ? (
        <path d="M3 5h18v14H3zM3 16l5-5 4 4 3-3 6 6M15.5 9.5h.01" />
      ) : (
        <>
          <path d={PAGE} />
          {kind === 'text' && <path d="M9 12h6M9 16h6" />}
        </>
      )}
      {label && (
        <text x="12" y="18.5" textAnchor="middle" fontSize={label.length > 3 ? 5.5 : 6.5} fontWeight={700} fill="currentColor" stroke="none" fontFamily="system-ui, sans-serif">
          {label}
        </text>
      )}
    </svg>
  );
}
