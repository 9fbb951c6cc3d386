// A FHIR resource as a clinician reads it first: a title, the facts in words, and tables — for the
// common clinical resources; null for any other, which the viewer shows as a field tree. Values
// are formatted by @medplum/core (names, codes, quantities, ranges, periods, addresses), the same
// rules its React components use. Resources are plain JSON here (untrusted file content): every
// access is guarded, and nothing is ever rendered as markup. What must stand out carries a flag
// (lib/view/viewer/flags.ts): an abnormal value, a report with one, a high-criticality allergy; a
// Bundle lists those entries first.
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
import { combine, flagOfCode, flagOfRange, HIGH_CRITICALITY, rankOf, worst, type Bounds, type ResultFlag } from './flags';

export interface Fact {
  label: string;
  value: string;
  /** Shown beside the value: it is abnormal, or critical. */
  flag?: ResultFlag | null;
}

export interface Table {
  caption: string;
  columns: string[];
  rows: string[][];
  /** Each row's flag, shown in the column named `flagColumn` in place of its text. */
  flags?: Array<ResultFlag | null>;
  flagColumn?: string;
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
  /** What makes it stand out: an abnormal result (the worst, for a report), a critical allergy. */
  flag?: ResultFlag | null;
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

function facts(...pairs: Array<[string, string] | [string, string, ResultFlag | null]>): Fact[] {
  return pairs.filter(([, value, flag]) => value !== '' || flag).map(([label, value, flag]) => (flag ? { label, value, flag } : { label, value }));
}

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** One interpretation concept: the first of its codings (or its text) that is a known code, else its words. */
function interpretationFlag(c: Json): ResultFlag | null {
  const candidates = [...list(c.coding).map((coding) => flagOfCode(str(coding.code), str(coding.display))), flagOfCode('', str(c.text))];
  return candidates.find((f) => f && f.level !== 'other') ?? (concept(c) ? flagOfCode('', concept(c)) : null);
}

/** The normal range for a quantity: a range of no type or type "normal", in the value's unit. */
function boundsOf(ranges: unknown, quantity: Json): Bounds | null {
  const unitOf = (q: unknown) => (isObject(q) ? str(q.code) || str(q.unit) : '');
  for (const r of list(ranges)) {
    const type = concept(r.type).toLowerCase();
    if (type && type !== 'normal' && type !== 'normal range') continue;
    const low = isObject(r.low) && isNumber(r.low.value) ? r.low.value : undefined;
    const high = isObject(r.high) && isNumber(r.high.value) ? r.high.value : undefined;
    if (low === undefined && high === undefined) continue;
    const unit = unitOf(quantity);
    const rangeUnit = unitOf(r.low) || unitOf(r.high);
    if (unit && rangeUnit && unit !== rangeUnit) continue;
    return { low, high };
  }
  return null;
}

/**
 * An Observation's (or a component's) flag: its interpretation, else its quantity against its
 * reference range; none for one entered in error or cancelled, which must not stand out.
 */
function observationFlag(o: Json, status = str(o.status)): ResultFlag | null {
  if (status === 'entered-in-error' || status === 'cancelled') return null;
  const coded = combine(list(o.interpretation).map(interpretationFlag));
  if (coded && coded.level !== 'other') return coded;
  // Words no code matched ("Haemolysed sample") do not hide a value outside its range.
  const q = o.valueQuantity;
  const ranged = isObject(q) && isNumber(q.value) && !q.comparator ? flagOfRange(q.value, boundsOf(o.referenceRange, q)) : null;
  return ranged?.level === 'abnormal' ? ranged : (coded ?? ranged);
}

/** The interpretation in words, unless the flag beside the value already says just that. */
function interpretationText(o: Json, flag: ResultFlag | null): string {
  const text = concepts(o.interpretation);
  return flag && text.toLowerCase() === flag.label.toLowerCase() ? '' : text;
}

/** Lab results are about a sample: their effective time is when it was collected. */
function isLab(r: Json): boolean {
  return list(r.category).some((c) => list(c.coding).some((coding) => ['laboratory', 'LAB'].includes(str(coding.code)))) || isObject(r.specimen);
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
  const own = observationFlag(o);
  // Beside the value: a flag this reader understood; words it did not stay the interpretation.
  const beside = own && own.level !== 'other' ? own : null;
  const componentFlags = components.map((c) => observationFlag(c, str(o.status)));
  // The test is the title: not repeated as a fact.
  return {
    resourceType: 'Observation',
    title: concept(o.code) || 'Observation',
    flag: own ?? worst(componentFlags),
    facts: facts(
      ['Value', components.length > 0 && !o.value ? '' : observationValue(o), beside],
      ['Reference range', referenceRange(o.referenceRange)],
      ['Interpretation', interpretationText(o, beside)],
      ['Status', str(o.status)],
      // For a lab result, when the sample was taken (effective[x]), not only when it was reported.
      [isLab(o) ? 'Collected' : 'When', choice(o, 'effective')],
      ['Reported', when(o.issued)],
      ['Patient', reference(o.subject, resolve)],
      ['Performer', references(o.performer, resolve)],
      ['Category', concepts(o.category)],
      ['Note', list(o.note).map((n) => str(n.text)).filter(Boolean).join(' ')],
    ),
    tables: flaggedTable(
      'Components',
      ['Test', 'Value', 'Reference range', 'Interpretation'],
      components.map((c) => [concept(c.code), observationValue(c), referenceRange(c.referenceRange), concepts(c.interpretation)]),
      componentFlags,
    ),
  };
}

/** A table whose rows have flags, shown in its Interpretation column; a plain table when none has. */
function flaggedTable(caption: string, columns: string[], rows: string[][], flags: Array<ResultFlag | null>): Table[] {
  if (rows.length === 0) return [];
  return flags.some(Boolean) ? [{ caption, columns, rows, flags, flagColumn: 'Interpretation' }] : [{ caption, columns, rows }];
}

function diagnosticReport(d: Json, resolve?: Resolver): Summary {
  const flags: Array<ResultFlag | null> = [];
  const results = list(d.result).map((ref) => {
    const target = resolve?.(str(ref.reference));
    if (target && target.resourceType === 'Observation') {
      flags.push(observationFlag(target));
      return [concept(target.code) || reference(ref), observationValue(target), referenceRange(target.referenceRange), concepts(target.interpretation)];
    }
    flags.push(null);
    return [reference(ref), '', '', ''];
  });
  // The report is the title: not repeated as a fact.
  return {
    resourceType: 'DiagnosticReport',
    title: concept(d.code) || 'Diagnostic report',
    flag: worst(flags),
    facts: facts(
      ['Status', str(d.status)],
      ['Patient', reference(d.subject, resolve)],
      [isLab(d) ? 'Collected' : 'When', choice(d, 'effective')],
      ['Reported', when(d.issued)],
      ['Performer', references(d.performer, resolve)],
      ['Conclusion', str(d.conclusion)],
      ['Category', concepts(d.category)],
    ),
    tables: flaggedTable('Results', ['Test', 'Value', 'Reference range', 'Interpretation'], results, flags),
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

/** High criticality stands out while the allergy holds: not once resolved, refuted or entered in error. */
function allergyFlag(a: Json): ResultFlag | null {
  const withdrawn = ['inactive', 'resolved', 'refuted', 'entered-in-error'];
  const codes = [...list(a.clinicalStatus?.coding), ...list(a.verificationStatus?.coding)].map((c) => str(c.code));
  return str(a.criticality) === 'high' && !codes.some((c) => withdrawn.includes(c)) ? HIGH_CRITICALITY : null;
}

function allergy(a: Json, resolve?: Resolver): Summary {
  const flag = allergyFlag(a);
  // The substance is the title: not repeated as a fact.
  return {
    resourceType: 'AllergyIntolerance',
    title: concept(a.code) || 'Allergy or intolerance',
    flag,
    facts: facts(
      // Flagged, the flag's words say it ("High criticality"), not "high" beside them.
      ['Criticality', flag ? '' : str(a.criticality), flag],
      ['Clinical status', concept(a.clinicalStatus)],
      ['Verification', concept(a.verificationStatus)],
      ['Type', str(a.type)],
      ['Category', Array.isArray(a.category) ? a.category.map(str).join(', ') : ''],
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

/** How far up a Bundle an entry goes: critical 3, abnormal 2; unclassified and normal stay in place. */
const urgency = (s: Summary) => (rankOf(s.flag) >= 2 ? rankOf(s.flag) : 0);

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
  const patients = shown.filter((s) => s.resourceType === 'Patient').map((s) => s.title);
  const flagged = shown.filter((s) => urgency(s) > 0).length;
  return {
    resourceType: 'Bundle',
    title: `${str(b.type) || 'Bundle'} of ${entries.length} ${entries.length === 1 ? 'entry' : 'entries'}`,
    facts: facts(
      // Who it is about, above the entries: they are in order of what needs attention, not the file's.
      ['Patient', patients.join('; ')],
      ['Needs attention', flagged > 0 ? `${flagged} ${flagged === 1 ? 'entry' : 'entries'} (listed first)` : ''],
      ['Type', str(b.type)],
      ['When', when(b.timestamp)],
      ['Total', str(b.total)],
      ['Not shown', entries.length > MAX_ENTRIES ? `${entries.length - MAX_ENTRIES} more entries` : ''],
    ),
    tables: [],
    // Critical first, then abnormal, then the rest; each group in the file's order (a stable sort).
    entries: [...shown].sort((x, y) => urgency(y) - urgency(x)),
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
      const s = summary(resource, resolve);
      // The title is said once: a fact that only repeats it (a condition's "Condition") is left out.
      return { ...s, facts: s.facts.filter((f) => f.value !== s.title || f.flag) };
    } catch {
      // A shape no formatter expected: the field tree still shows everything.
    }
  }
  return { resourceType: type || 'Unknown', title: [type, str(resource.id)].filter(Boolean).join('/') || 'Resource', facts: [], tables: [], raw: resource };
}

export function isResource(value: unknown): value is Json {
  return isObject(value) && typeof value.resourceType === 'string';
}
