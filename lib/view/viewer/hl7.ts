// An HL7 v2 message (ER7, pipe-delimited) as a clinician reads it: the header (message type,
// sending facility), the patient (PID), when the sample was collected (OBR-7, SPM-17, OBX-14), the
// results (OBX) each with its flag (lib/view/viewer/flags.ts), and every other segment with its
// fields named. Blank lines (a message's final line break) are not segments and say nothing. Splitting into segments, fields, repetitions and components is @medplum/core's
// parser (it honours the message's own delimiters from MSH-1/2); the escape sequences
// (\F\ \S\ \T\ \R\ \E\ \.br\ \Xhh\) it leaves as they are, so they are decoded here.
import { Hl7Message, type Hl7Field, type Hl7Segment } from '@medplum/core';
import { combine, flagOfCode, flagOfRange, parseNumber, parseRange, rankOf, type ResultFlag } from './flags';
import { fieldName } from './hl7-fields';

export interface Hl7Header {
  messageType: string;
  sendingApplication: string;
  sendingFacility: string;
  receivingFacility: string;
  time: string;
  controlId: string;
  version: string;
}

export interface Hl7Patient {
  name: string;
  identifiers: string[];
  birthDate: string;
  sex: string;
  address: string;
}

export interface Hl7Result {
  setId: string;
  test: string;
  value: string;
  unit: string;
  range: string;
  /** OBX-8's codes in words with their severity; else the value against the range; null if neither says. */
  flag: ResultFlag | null;
  status: string;
  /** When the sample was taken: OBX-14, else its order's collection time (OBR-7 or SPM-17). */
  collected: string;
  /** The comments (NTE) that follow this result. */
  notes: string[];
}

export interface Hl7SegmentView {
  name: string;
  fields: Array<{ position: string; name: string | null; value: string }>;
}

export interface Hl7Order {
  test: string;
  /** OBR-7 (observation date/time: the collection of the sample), else the specimen's SPM-17. */
  collected: string;
  /** OBR-14: when the lab received the sample. */
  received: string;
}

export interface Hl7View {
  header: Hl7Header | null;
  patient: Hl7Patient | null;
  /** OBR: what was ordered, above its results. */
  orders: Hl7Order[];
  results: Hl7Result[];
  /** The distinct collection times of the results, in order: one for most messages. */
  collected: string[];
  /** How many results are flagged abnormal (critical ones included) and how many critical. */
  abnormal: number;
  critical: number;
  segments: Hl7SegmentView[];
  /** What is wrong with the message, in words; empty when nothing is. */
  problems: string[];
}

interface Separators {
  field: string;
  component: string;
  repetition: string;
  escape: string;
  subcomponent: string;
}

const STATUS: Record<string, string> = { F: 'Final', P: 'Preliminary', C: 'Corrected', X: 'Cancelled', R: 'Not verified', I: 'Pending', D: 'Deleted', W: 'Wrong, replaced' };
/** Results withdrawn by the lab: their value must not stand out as abnormal. */
const WITHDRAWN = new Set(['D', 'W', 'X']);
const SEX: Record<string, string> = { M: 'Male', F: 'Female', O: 'Other', U: 'Unknown', A: 'Ambiguous', N: 'Not applicable' };

/** Decodes HL7 escape sequences with this message's delimiters. */
export function unescapeHl7(text: string, s: Separators): string {
  const e = s.escape;
  if (!e || !text.includes(e)) return text;
  const esc = e.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
  const pattern = new RegExp(`${esc}([^${esc}\\r\\n]*)${esc}`, 'g');
  return text.replace(pattern, (whole, code: string) => {
    if (code === 'F') return s.field;
    if (code === 'S') return s.component;
    if (code === 'T') return s.subcomponent;
    if (code === 'R') return s.repetition;
    if (code === 'E') return e;
    if (code === '.br') return '\n';
    if (/^X([0-9A-Fa-f]{2})+$/.test(code)) return code.slice(1).replace(/../g, (h) => String.fromCharCode(parseInt(h, 16)));
    // Formatting (\H\ \N\ highlighting, \.sp\ …): dropped, the text stays.
    if (/^(H|N|\.[a-z]{2}[+-]?\d*)$/.test(code)) return code === '.sp' ? '\n' : '';
    return whole;
  });
}

/** A timestamp YYYYMMDD[HHMM[SS]][+ZZZZ] as "2024-03-05 14:30"; anything else unchanged. */
export function hl7Time(value: string): string {
  const m = /^(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:\.\d+)?([+-]\d{4})?$/.exec(value);
  if (!m) return value;
  let out = m[1]!;
  if (m[2]) out += `-${m[2]}`;
  if (m[3]) out += `-${m[3]}`;
  if (m[4]) out += ` ${m[4]}:${m[5] ?? '00'}`;
  if (m[7]) out += ` ${m[7]}`;
  return out;
}

function reader(message: Hl7Message) {
  const c = message.context;
  const s: Separators = { field: c.fieldSeparator, component: c.componentSeparator, repetition: c.repetitionSeparator, escape: c.escapeCharacter, subcomponent: c.subcomponentSeparator };
  const text = (v: string | undefined) => unescapeHl7((v ?? '').split(s.subcomponent).filter(Boolean).join(' '), s);
  /** Component `n` (1-based) of the first repetition. */
  const comp = (f: Hl7Field | undefined, n: number, rep = 0) => text(f?.components[rep]?.[n - 1]);
  /** A coded element: "Glucose (GLU)", or whichever part is there. */
  const coded = (f: Hl7Field | undefined, rep = 0) => {
    const code = comp(f, 1, rep);
    const label = comp(f, 2, rep);
    return label && code && label !== code ? `${label} (${code})` : label || code;
  };
  /** Every repetition, its non-empty components joined. */
  const plain = (f: Hl7Field | undefined) =>
    (f?.components ?? [])
      .map((rep) => rep.map(text).filter(Boolean).join(' '))
      .filter(Boolean)
      .join('; ');
  return { s, comp, coded, plain };
}

function field(segment: Hl7Segment | undefined, n: number): Hl7Field | undefined {
  // MSH counts its field separator as MSH-1, so its last field is one further than the array.
  const last = segment?.name === 'MSH' ? segment.fields.length : (segment?.fields.length ?? 0) - 1;
  if (!segment || n > last) return undefined;
  return segment.getField(n);
}

function personName(r: ReturnType<typeof reader>, f: Hl7Field | undefined): string {
  const family = r.comp(f, 1);
  const given = [r.comp(f, 2), r.comp(f, 3)].filter(Boolean).join(' ');
  const prefix = r.comp(f, 5);
  return [prefix, given, family].filter(Boolean).join(' ') || r.plain(f);
}

/** Segments of a message too damaged for the parser: split by line, fields by `|`. */
function roughSegments(text: string): Hl7SegmentView[] {
  return text
    .split(/\r\n|\r|\n/)
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const parts = line.split('|');
      const name = parts[0]!.slice(0, 3);
      return { name, fields: parts.slice(1).map((value, i) => ({ position: `${name}-${i + 1}`, name: fieldName(name, i + 1), value })).filter((f) => f.value !== '') };
    });
}

export const MAX_SEGMENTS = 5000;

const unread = (text: string, problem: string): Hl7View => ({
  header: null,
  patient: null,
  orders: [],
  results: [],
  collected: [],
  abnormal: 0,
  critical: 0,
  segments: roughSegments(text).slice(0, MAX_SEGMENTS),
  problems: [problem],
});

export function readHl7(raw: string): Hl7View {
  const problems: string[] = [];
  const text = raw.replace(/^\uFEFF/, '').replace(/^\s+/, '');
  if (!text.startsWith('MSH')) return unread(text, 'This does not start with an MSH header segment, so it cannot be read as an HL7 v2 message. The lines are listed as they are.');
  let message: Hl7Message;
  try {
    // Segments end in \r (or \n, \r\n from a text editor); an empty line, such as the one after the
    // last segment's line break, is no segment at all.
    const lines = text.split(/\r\n|\r|\n/).filter((line) => line.trim() !== '');
    message = Hl7Message.parse(lines.join('\r'));
  } catch (error) {
    return unread(text, `The message could not be read (${error instanceof Error ? error.message : String(error)}). The lines are listed as they are.`);
  }
  const r = reader(message);
  const msh = message.header;
  if (msh.fields.length < 9) problems.push('The header (MSH) is cut short: the message type is missing. The message may be truncated.');
  const header: Hl7Header = {
    messageType: [r.comp(field(msh, 9), 1), r.comp(field(msh, 9), 2)].filter(Boolean).join('^'),
    sendingApplication: r.plain(field(msh, 3)),
    sendingFacility: r.plain(field(msh, 4)),
    receivingFacility: r.plain(field(msh, 6)),
    time: hl7Time(r.comp(field(msh, 7), 1)),
    controlId: r.plain(field(msh, 10)),
    version: r.comp(field(msh, 12), 1),
  };

  const pid = message.get('PID');
  const patient: Hl7Patient | null = pid
    ? {
        name: personName(r, field(pid, 5)),
        identifiers: (field(pid, 3)?.components ?? []).map((_, i) => {
          const id = r.comp(field(pid, 3), 1, i);
          const type = r.comp(field(pid, 3), 5, i) || r.comp(field(pid, 3), 4, i);
          return type ? `${id} (${type})` : id;
        }).filter(Boolean),
        birthDate: hl7Time(r.comp(field(pid, 7), 1)),
        sex: SEX[r.comp(field(pid, 8), 1)] ?? r.comp(field(pid, 8), 1),
        address: r.plain(field(pid, 11)),
      }
    : null;

  const orders: Hl7Order[] = [];
  const results: Hl7Result[] = [];
  /** The order each result belongs to (its OBR), for a collection time its OBX does not give. */
  const orderOf = new Map<Hl7Result, Hl7Order>();
  const segments: Hl7SegmentView[] = [];
  let last: Hl7Result | null = null;
  for (const segment of message.segments.slice(0, MAX_SEGMENTS)) {
    if (!/^[A-Z][A-Z0-9]{2}$/.test(segment.name)) {
      problems.push(`A line starting “${segment.name.slice(0, 12)}” is not a segment; it is listed as it is.`);
    }
    if (segment.name === 'OBR') {
      orders.push({ test: r.coded(field(segment, 4)), collected: hl7Time(r.comp(field(segment, 7), 1)), received: hl7Time(r.comp(field(segment, 14), 1)) });
    }
    // A specimen's collection time (SPM-17, a range: its start) for an order that did not give one.
    const order = orders.at(-1);
    if (segment.name === 'SPM' && order && !order.collected) order.collected = hl7Time(r.comp(field(segment, 17), 1));
    if (segment.name === 'OBX') {
      if (segment.fields.length < 6) problems.push(`Result ${r.plain(field(segment, 1)) || results.length + 1} (OBX) is cut short: it has no value. The message may be truncated.`);
      const type = r.comp(field(segment, 2), 1);
      const valueField = field(segment, 5);
      // A coded value reads as its label; a numeric or text value as written (repetitions joined).
      const value = type === 'CE' || type === 'CWE' ? r.coded(valueField) : r.plain(valueField);
      const codes = (field(segment, 8)?.components ?? []).map((_, i) => r.comp(field(segment, 8), 1, i)).filter(Boolean);
      const range = r.plain(field(segment, 7));
      const status = r.comp(field(segment, 11), 1);
      const numeric = type === 'NM' || type === 'SN' || type === '' ? parseNumber(value) : null;
      // The lab's codes first; codes this reader does not know do not hide a value outside its range.
      const coded = combine(codes.map((c) => flagOfCode(c)));
      const ranged = coded && coded.level !== 'other' ? null : flagOfRange(numeric, parseRange(range));
      const flag = WITHDRAWN.has(status) ? null : ranged?.level === 'abnormal' ? ranged : (coded ?? ranged);
      last = {
        setId: r.plain(field(segment, 1)),
        test: r.coded(field(segment, 3)),
        value,
        unit: r.comp(field(segment, 6), 2) || r.comp(field(segment, 6), 1),
        range,
        flag,
        status: STATUS[status] ?? status,
        collected: hl7Time(r.comp(field(segment, 14), 1)),
        notes: [],
      };
      results.push(last);
      if (order) orderOf.set(last, order);
      continue;
    }
    if (segment.name === 'NTE' && last) {
      last.notes.push(r.plain(field(segment, 3)));
      continue;
    }
    if (segment.name === 'MSH' || segment.name === 'PID') continue;
    const fields: Hl7SegmentView['fields'] = [];
    for (let n = 1; n < segment.fields.length; n++) {
      const value = r.plain(field(segment, n));
      if (value) fields.push({ position: `${segment.name}-${n}`, name: fieldName(segment.name, n), value });
    }
    segments.push({ name: segment.name, fields });
  }
  if (message.segments.length > MAX_SEGMENTS) problems.push(`Only the first ${MAX_SEGMENTS.toLocaleString('en')} of ${message.segments.length.toLocaleString('en')} segments are shown.`);
  for (const result of results) result.collected ||= orderOf.get(result)?.collected ?? '';
  const collected = [...new Set([...results.map((x) => x.collected), ...orders.map((o) => o.collected)].filter(Boolean))];
  return {
    header,
    patient,
    orders: orders.filter((o) => o.test),
    results,
    collected,
    abnormal: results.filter((x) => rankOf(x.flag) >= 2).length,
    critical: results.filter((x) => x.flag?.level === 'critical').length,
    segments,
    problems,
  };
}

/** "2 of 5 results abnormal, 1 critical"; "None of the 3 results is flagged abnormal". */
export function resultsSummary({ results, abnormal, critical }: Pick<Hl7View, 'results' | 'abnormal' | 'critical'>): string {
  const total = results.length;
  if (abnormal === 0) return total === 1 ? 'The result is not flagged abnormal' : `None of the ${total} results is flagged abnormal`;
  return `${abnormal} of ${total} ${total === 1 ? 'result' : 'results'} abnormal${critical > 0 ? `, ${critical} critical` : ''}`;
}
