// A FHIR resource as a clinician reads it first: a title, the facts in words, and tables — for the
// common clinical resources; null for any other, which the viewer shows as a field tree. Values
// are formatted by @medplum/core (names, codes, quantities, ranges, periods, addresses), the same
// rules its React components use. Resources are plain JSON here (untrusted file content): every
// access is guarded, and nothing is ever rendered as markup.
import {
  formatAddress,
  formatCodeableConcept,
  formatDateTime,
  formatHumanName,
  formatObservationValue,
  formatPeriod,
  formatQuantity,
  formatRange,
} from '@medplum/core';

export interface Fact {
  label: string;
  value: string;
}

export interface Table {
  caption: string;
  columns: string[];
  rows: string[][];
}

export interface Summary {
  resourceType: string;
  /** What it is about, in a few words: "Hemoglobin", "Jane Doe". */
  title: string;
  facts: Fact[];
  tables: Table[];
  /** A Bundle's entries, each summarised (or only named, for resources without a summary). */
  entries?: Summary[];
  /** The entry has no summary of its own: the viewer offers its fields instead. */
  raw?: unknown;
}

type Json = Record<string, any>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isObject) : isObject(v) ? [v] : []);
const str = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : '');

/** Runs a formatter on untrusted JSON: a shape it does not expect gives '' rather than a crash. */
function safe(format: () => string | undefined): string {
  try {
    return format() ?? '';
  } catch {
    return '';
  }
}

const concept = (v: unknown) => (isObject(v) ? safe(() => formatCodeableConcept(v)) || str(v.coding?.[0]?.code) : str(v));
const concepts = (v: unknown) => list(v).map(concept).filter(Boolean).join(', ');
/** Date-only values stay as written (no time zone shift); instants in the reader's locale. */
const when = (v: unknown) => (typeof v !== 'string' ? '' : /^\d{4}(-\d{2}){0,2}$/.test(v) ? v : safe(() => formatDateTime(v)) || v);
const period = (v: unknown) => (isObject(v) ? safe(() => formatPeriod(v)) : '');

/** The onset/effective[x] family: a dateTime, a Period, an age, a string… */
function choice(resource: Json, prefix: string): string {
  return (
    when(resource[`${prefix}DateTime`]) ||
    period(resource[`${prefix}Period`]) ||
    (isObject(resource[`${prefix}Age`]) ? safe(() => formatQuantity(resource[`${prefix}Age`])) : '') ||
    str(resource[`${prefix}String`]) ||
    when(resource[`${prefix}Instant`])
  );
}

/** A Reference's display, or what it points at. */
export function reference(v: unknown, resolve?: Resolver): string {
  if (!isObject(v)) return '';
  if (v.display) return str(v.display);
  const target = resolve?.(str(v.reference));
  if (target) return titleOf(target, resolve);
  return str(v.reference) || str(v.identifier?.value);
}

const references = (v: unknown, resolve?: Resolver) => list(v).map((r) => reference(r, resolve)).filter(Boolean).join(', ');

/** Finds a resource a reference points at: contained (#id) or in the same Bundle. */
export type Resolver = (ref: string) => Json | undefined;

function facts(...pairs: Array<[string, string]>): Fact[] {
  return pairs.filter(([, value]) => value !== '').map(([label, value]) => ({ label, value }));
}

function referenceRange(ranges: unknown): string {
  return list(ranges)
    .map((r) => {
      const bounds = r.low || r.high ? safe(() => formatRange({ low: r.low, high: r.high })) : '';
      return [bounds, str(r.text), concept(r.type), concepts(r.appliesTo)].filter(Boolean).join(' · ');
    })
    .filter(Boolean)
    .join('; ');
}

function observationValue(o: Json): string {
  const formatted = safe(() => formatObservationValue(o as never));
  if (formatted) return formatted;
  if (isObject(o.valueCodeableConcept)) return concept(o.valueCodeableConcept);
  if (o.valueBoolean !== undefined) return o.valueBoolean ? 'Yes' : 'No';
  return str(o.valueString) || str(o.valueInteger) || when(o.valueDateTime) || (o.dataAbsentReason ? `No value: ${concept(o.dataAbsentReason)}` : '');
}

function patient(p: Json): Summary {
  const name = list(p.name).map((n) => safe(() => formatHumanName(n))).filter(Boolean);
  return {
    resourceType: 'Patient',
    title: name[0] || 'Patient',
    facts: facts(
      ['Born', when(p.birthDate)],
      ['Sex', str(p.gender)],
      ['Deceased', p.deceasedBoolean === true ? 'Yes' : when(p.deceasedDateTime)],
      ['Other names', name.slice(1).join('; ')],
      ['Phone / email', list(p.telecom).map((t) => [str(t.value), str(t.use)].filter(Boolean).join(' (') + (t.use ? ')' : '')).filter(Boolean).join('; ')],
      ['Address', list(p.address).map((a) => safe(() => formatAddress(a))).filter(Boolean).join('; ')],
      ['General practitioner', references(p.generalPractitioner)],
    ),
    tables: tableOf('Identifiers', ['System', 'Value'], list(p.identifier).map((i) => [concept(i.type) || str(i.system), str(i.value)])),
  };
}

function tableOf(caption: string, columns: string[], rows: string[][]): Table[] {
  return rows.length > 0 ? [{ caption, columns, rows }] : [];
}

function observation(o: Json, resolve?: Resolver): Summary {
  const components = list(o.component);
  return {
    resourceType: 'Observation',
    title: concept(o.code) || 'Observation',
    facts: facts(
      ['Test', concept(o.code)],
      ['Value', components.length > 0 && !o.value ? '' : observationValue(o)],
      ['Reference range', referenceRange(o.referenceRange)],
      ['Interpretation', concepts(o.interpretation)],
      ['Status', str(o.status)],
      ['When', choice(o, 'effective') || when(o.issued)],
      ['Patient', reference(o.subject, resolve)],
      ['Performer', references(o.performer, resolve)],
      ['Category', concepts(o.category)],
      ['Note', list(o.note).map((n) => str(n.text)).filter(Boolean).join(' ')],
    ),
    tables: tableOf(
      'Components',
      ['Test', 'Value', 'Reference range', 'Interpretation'],
      components.map((c) => [concept(c.code), observationValue(c), referenceRange(c.referenceRange), concepts(c.interpretation)]),
    ),
  };
}

function diagnosticReport(d: Json, resolve?: Resolver): Summary {
  const results = list(d.result).map((ref) => {
    const target = resolve?.(str(ref.reference));
    if (target && target.resourceType === 'Observation') {
      return [concept(target.code) || reference(ref), observationValue(target), referenceRange(target.referenceRange), concepts(target.interpretation)];
    }
    return [reference(ref), '', '', ''];
  });
  return {
    resourceType: 'DiagnosticReport',
    title: concept(d.code) || 'Diagnostic report',
    facts: facts(
      ['Report', concept(d.code)],
      ['Status', str(d.status)],
      ['Patient', reference(d.subject, resolve)],
      ['When', choice(d, 'effective')],
      ['Issued', when(d.issued)],
      ['Performer', references(d.performer, resolve)],
      ['Conclusion', str(d.conclusion)],
      ['Category', concepts(d.category)],
    ),
    tables: tableOf('Results', ['Test', 'Value', 'Reference range', 'Interpretation'], results),
  };
}

function dosage(v: unknown): string {
  return list(v)
    .map((d) => {
      if (d.text) return str(d.text);
      const dose = list(d.doseAndRate).map((r) => safe(() => formatQuantity(r.doseQuantity)) || (r.doseRange ? safe(() => formatRange(r.doseRange)) : '')).filter(Boolean).join(', ');
      const repeat = d.timing?.repeat;
      const timing = isObject(repeat) && repeat.frequency ? `${str(repeat.frequency)} time(s) every ${str(repeat.period ?? 1)} ${str(repeat.periodUnit)}` : concept(d.timing?.code);
      return [dose, concept(d.route), timing, d.asNeededBoolean ? 'as needed' : ''].filter(Boolean).join(', ');
    })
    .filter(Boolean)
    .join('; ');
}

function medication(m: Json, resolve?: Resolver): Summary {
  const statement = m.resourceType === 'MedicationStatement';
  const med = concept(m.medicationCodeableConcept) || reference(m.medicationReference, resolve) || concept(m.medication?.concept) || reference(m.medication?.reference, resolve);
  return {
    resourceType: str(m.resourceType),
    title: med || (statement ? 'Medication statement' : 'Medication request'),
    facts: facts(
      ['Medication', med],
      ['Dosage', dosage(statement ? m.dosage : m.dosageInstruction)],
      ['Status', str(m.status)],
      ['Intent', str(m.intent)],
      ['Patient', reference(m.subject, resolve)],
      [statement ? 'Taken' : 'Written', statement ? choice(m, 'effective') || when(m.dateAsserted) : when(m.authoredOn)],
      [statement ? 'Information from' : 'Prescriber', reference(statement ? m.informationSource : m.requester, resolve)],
      ['Reason', concepts(m.reasonCode) || references(m.reasonReference, resolve)],
      ['Note', list(m.note).map((n) => str(n.text)).filter(Boolean).join(' ')],
    ),
    tables: [],
  };
}

function allergy(a: Json, resolve?: Resolver): Summary {
  return {
    resourceType: 'AllergyIntolerance',
    title: concept(a.code) || 'Allergy or intolerance',
    facts: facts(
      ['Substance', concept(a.code)],
      ['Clinical status', concept(a.clinicalStatus)],
      ['Verification', concept(a.verificationStatus)],
      ['Type', str(a.type)],
      ['Category', Array.isArray(a.category) ? a.category.map(str).join(', ') : ''],
      ['Criticality', str(a.criticality)],
      ['Onset', choice(a, 'onset')],
      ['Recorded', when(a.recordedDate)],
      ['Patient', reference(a.patient, resolve)],
    ),
    tables: tableOf(
      'Reactions',
      ['Manifestation', 'Severity', 'Substance'],
      list(a.reaction).map((r) => [concepts(r.manifestation), str(r.severity), concept(r.substance)]),
    ),
  };
}

function condition(c: Json, resolve?: Resolver): Summary {
  return {
    resourceType: 'Condition',
    title: concept(c.code) || 'Condition',
    facts: facts(
      ['Condition', concept(c.code)],
      ['Clinical status', concept(c.clinicalStatus)],
      ['Verification', concept(c.verificationStatus)],
      ['Severity', concept(c.severity)],
      ['Body site', concepts(c.bodySite)],
      ['Onset', choice(c, 'onset')],
      ['Resolved', choice(c, 'abatement')],
      ['Recorded', when(c.recordedDate)],
      ['Patient', reference(c.subject, resolve)],
      ['Category', concepts(c.category)],
    ),
    tables: [],
  };
}

function encounter(e: Json, resolve?: Resolver): Summary {
  const cls = isObject(e.class) ? str(e.class.display) || str(e.class.code) : concepts(e.class);
  return {
    resourceType: 'Encounter',
    title: concepts(e.type) || cls || 'Encounter',
    facts: facts(
      ['Class', cls],
      ['Type', concepts(e.type)],
      ['Status', str(e.status)],
      ['When', period(e.period) || period(e.actualPeriod)],
      ['Patient', reference(e.subject, resolve)],
      ['Reason', concepts(e.reasonCode)],
      ['Where', list(e.location).map((l) => reference(l.location, resolve)).filter(Boolean).join(', ')],
      ['Provider', reference(e.serviceProvider, resolve)],
    ),
    tables: tableOf('Participants', ['Role', 'Who'], list(e.participant).map((p) => [concepts(p.type), reference(p.individual ?? p.actor, resolve)])),
  };
}

function documentReference(d: Json, resolve?: Resolver): Summary {
  return {
    resourceType: 'DocumentReference',
    title: str(d.description) || concept(d.type) || 'Document',
    facts: facts(
      ['Type', concept(d.type)],
      ['Status', str(d.status)],
      ['Date', when(d.date)],
      ['Patient', reference(d.subject, resolve)],
      ['Author', references(d.author, resolve)],
      ['Description', str(d.description)],
      ['Category', concepts(d.category)],
    ),
    // The attachment's URL is shown as text, never a link: it comes from the file.
    tables: tableOf(
      'Content',
      ['Title', 'Type', 'Size', 'Location'],
      list(d.content).map((c) => [str(c.attachment?.title), str(c.attachment?.contentType), str(c.attachment?.size), str(c.attachment?.url)]),
    ),
  };
}

const SUMMARIES: Record<string, (r: Json, resolve?: Resolver) => Summary> = {
  Patient: patient,
  Observation: observation,
  DiagnosticReport: diagnosticReport,
  MedicationRequest: medication,
  MedicationStatement: medication,
  AllergyIntolerance: allergy,
  Condition: condition,
  Encounter: encounter,
  DocumentReference: documentReference,
};

/** A short name for any resource: its summary's title, else its type and id. */
function titleOf(r: Json, resolve?: Resolver): string {
  const summarise = SUMMARIES[str(r.resourceType)];
  const title = summarise ? safe(() => summarise(r, resolve).title) : '';
  return title || [str(r.resourceType), str(r.id)].filter(Boolean).join('/');
}

export const MAX_ENTRIES = 500;

function bundle(b: Json): Summary {
  const entries = list(b.entry);
  const byRef = new Map<string, Json>();
  for (const e of entries) {
    if (!isObject(e.resource)) continue;
    if (e.fullUrl) byRef.set(str(e.fullUrl), e.resource);
    if (e.resource.id) byRef.set(`${str(e.resource.resourceType)}/${str(e.resource.id)}`, e.resource);
  }
  const resolve: Resolver = (ref) => byRef.get(ref);
  const shown = entries.slice(0, MAX_ENTRIES).map((e) => (isObject(e.resource) ? summarise(e.resource, resolve) : { resourceType: 'Entry', title: 'An entry without a resource', facts: [], tables: [] }));
  return {
    resourceType: 'Bundle',
    title: `${str(b.type) || 'Bundle'} of ${entries.length} ${entries.length === 1 ? 'entry' : 'entries'}`,
    facts: facts(['Type', str(b.type)], ['When', when(b.timestamp)], ['Total', str(b.total)], ['Not shown', entries.length > MAX_ENTRIES ? `${entries.length - MAX_ENTRIES} more entries` : '']),
    tables: [],
    entries: shown,
  };
}

/** The summary of a resource; for a type without one, its title and `raw` (shown as a field tree). */
export function summarise(resource: Json, outer?: Resolver): Summary {
  const type = str(resource.resourceType);
  const contained = new Map<string, Json>(list(resource.contained).map((c) => [`#${str(c.id)}`, c]));
  const resolve: Resolver = (ref) => contained.get(ref) ?? outer?.(ref);
  if (type === 'Bundle') return bundle(resource);
  const summary = SUMMARIES[type];
  if (summary) {
    try {
      return summary(resource, resolve);
    } catch {
      // A shape no formatter expected: the field tree still shows everything.
    }
  }
  return { resourceType: type || 'Unknown', title: [type, str(resource.id)].filter(Boolean).join('/') || 'Resource', facts: [], tables: [], raw: resource };
}

export function isResource(value: unknown): value is Json {
  return isObject(value) && typeof value.resourceType === 'string';
}
