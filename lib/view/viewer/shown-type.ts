// The type the viewer's header shows. The declared type in words (humanType), except where the
// content was read as a kind that type does not say: an HL7 message stored as text/plain reads
// "HL7 v2", a FHIR resource sent as application/json "FHIR JSON", a PDF sent as octet-stream "PDF".
import { humanType } from '../format';
import { kindOfName, type ViewKind } from './kind';

const CONTENT_LABEL: Partial<Record<ViewKind, string>> = {
  hl7: 'HL7 v2',
  fhir: 'FHIR JSON',
  pdf: 'PDF',
  csv: 'CSV',
  json: 'JSON',
};

/** `kind`: what the viewer shows the file as (lib/view/viewer/kind.ts's kindOf). */
export function shownType(kind: ViewKind, declaredType: string): string {
  const label = CONTENT_LABEL[kind];
  if (label && kindOfName('', declaredType) !== kind) return label;
  return humanType(declaredType);
}
