// The type the viewer's header shows. The declared type in words (humanType), except where the
// content was read as a kind that type does not say: an HL7 message stored as text/plain reads
// "HL7 v2 message", a FHIR resource sent as application/json "FHIR resource", a PDF sent as
// octet-stream "PDF" — each kind's name is humanType's, for the type that names it.
import { humanType } from '../format';
import { kindOfName, type ViewKind } from './kind';

const KIND_TYPE: Partial<Record<ViewKind, string>> = {
  hl7: 'application/hl7-v2',
  fhir: 'application/fhir+json',
  pdf: 'application/pdf',
  csv: 'text/csv',
  json: 'application/json',
};

/**
 * `kind`: what the viewer shows the file as (lib/view/viewer/kind.ts's kindOf); `head`, its first
 * bytes once here: a FHIR resource then reads as what it is ("FHIR Observation").
 */
export function shownType(kind: ViewKind, declaredType: string, head?: Uint8Array): string {
  const resourceType = kind === 'fhir' && head ? /"resourceType"\s*:\s*"([A-Za-z]{1,64})"/.exec(new TextDecoder().decode(head.subarray(0, 4096)))?.[1] : undefined;
  if (resourceType) return `FHIR ${resourceType}`;
  const type = KIND_TYPE[kind];
  if (type && kindOfName('', declaredType) !== kind) return humanType(type);
  return humanType(declaredType);
}
