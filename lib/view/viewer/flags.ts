// Whether a result is abnormal, and how: from the lab's own interpretation codes (HL7 v2 table 0078,
// the same codes as FHIR's v3 ObservationInterpretation), else from the value against its reference
// range. The lab's code wins over the range (it knows the patient's age, sex and the method); the
// range is only used when no code says anything. Each flag carries words and a symbol, so the view
// never relies on colour alone.

export type FlagLevel = 'critical' | 'abnormal' | 'normal' | 'other';
export type FlagDirection = 'high' | 'low' | null;

export interface ResultFlag {
  level: FlagLevel;
  direction: FlagDirection;
  /** In words, as shown: "Critically high", "Low", "Normal". */
  label: string;
  /** Shown before the label (never instead of it): "↑↑", "↓", "!". Empty for normal and other. */
  symbol: string;
}

const flag = (level: FlagLevel, direction: FlagDirection, label: string): ResultFlag => ({ level, direction, label, symbol: symbolOf(level, direction) });

function symbolOf(level: FlagLevel, direction: FlagDirection): string {
  if (level === 'critical') return direction === 'high' ? '↑↑' : direction === 'low' ? '↓↓' : '!!';
  if (level === 'abnormal') return direction === 'high' ? '↑' : direction === 'low' ? '↓' : '!';
  return '';
}

/** Interpretation codes, upper case. Codes not here are shown as they are, unclassified ('other'). */
const CODES: Record<string, ResultFlag> = {
  HH: flag('critical', 'high', 'Critically high'),
  'H>': flag('critical', 'high', 'Critically high'),
  LL: flag('critical', 'low', 'Critically low'),
  'L<': flag('critical', 'low', 'Critically low'),
  AA: flag('critical', null, 'Critically abnormal'),
  H: flag('abnormal', 'high', 'High'),
  HU: flag('abnormal', 'high', 'Significantly high'),
  HX: flag('abnormal', 'high', 'Above high threshold'),
  '>': flag('abnormal', 'high', 'Above measurable range'),
  L: flag('abnormal', 'low', 'Low'),
  LU: flag('abnormal', 'low', 'Significantly low'),
  LX: flag('abnormal', 'low', 'Below low threshold'),
  '<': flag('abnormal', 'low', 'Below measurable range'),
  A: flag('abnormal', null, 'Abnormal'),
  POS: flag('abnormal', null, 'Positive'),
  DET: flag('abnormal', null, 'Detected'),
  R: flag('abnormal', null, 'Resistant'),
  UNE: flag('abnormal', null, 'Unexpected'),
  EX: flag('abnormal', null, 'Outside threshold'),
  N: flag('normal', null, 'Normal'),
  NEG: flag('normal', null, 'Negative'),
  ND: flag('normal', null, 'Not detected'),
  S: flag('normal', null, 'Susceptible'),
  EXP: flag('normal', null, 'Expected'),
};

/** Words some systems send in place of a code (FHIR interpretation.text, lower case). */
const WORDS: Record<string, string> = {
  high: 'H',
  low: 'L',
  abnormal: 'A',
  normal: 'N',
  'critically high': 'HH',
  'critical high': 'HH',
  'critically low': 'LL',
  'critical low': 'LL',
  'critically abnormal': 'AA',
  critical: 'AA',
  positive: 'POS',
  negative: 'NEG',
  detected: 'DET',
  'not detected': 'ND',
};

const RANK: Record<FlagLevel, number> = { critical: 3, abnormal: 2, other: 1, normal: 0 };

/** How much a flag should stand out: critical 3, abnormal 2, unclassified 1, normal or none 0. */
export function rankOf(f: ResultFlag | null | undefined): number {
  return f ? RANK[f.level] : 0;
}

/** The flag of one code or word ("HH", "High"); an unknown one as 'other' with its own text. */
export function flagOfCode(code: string, display = ''): ResultFlag | null {
  const key = code.trim().toUpperCase();
  const known = CODES[key] ?? CODES[WORDS[display.trim().toLowerCase()] ?? ''] ?? CODES[WORDS[code.trim().toLowerCase()] ?? ''];
  if (known) return known;
  const text = display.trim() || code.trim();
  return text ? flag('other', null, text) : null;
}

/**
 * One flag for several codes (HL7 OBX-8 repeats; FHIR interpretation is a list): the most severe
 * decides the colour and symbol, and the words name every code ("High, Worse").
 */
export function combine(flags: Array<ResultFlag | null>): ResultFlag | null {
  const present = flags.filter((f): f is ResultFlag => f !== null);
  if (present.length === 0) return null;
  const worst = present.reduce((a, b) => (rankOf(b) > rankOf(a) ? b : a));
  const labels = [...new Set(present.map((f) => f.label))];
  return labels.length === 1 ? worst : { ...worst, label: labels.join(', ') };
}

/** The more severe of two flags (for a report: the worst of its results). */
export function worst(flags: Array<ResultFlag | null | undefined>): ResultFlag | null {
  return flags.reduce<ResultFlag | null>((a, b) => (b && rankOf(b) > rankOf(a) ? b : a), null);
}

export interface Bounds {
  low?: number;
  high?: number;
}

const NUMBER = String.raw`[-+]?(?:\d+(?:\.\d*)?|\.\d+)`;

/** A plain number as written ("5.9", "-2", ".5"); null for text, comparators ("<0.1") or several numbers. */
export function parseNumber(value: string): number | null {
  const trimmed = value.trim();
  return new RegExp(`^${NUMBER}$`).test(trimmed) ? Number(trimmed) : null;
}

/**
 * A reference range as labs write it: "12.0-15.5", "3.5 - 5.1", "-2 to 2", "<5", "<= 5", ">60",
 * optionally followed by a unit ("3.5-5.1 mmol/L"); null for anything else ("negative", "see note").
 */
export function parseRange(text: string): Bounds | null {
  const t = text.trim();
  // A unit after the numbers starts with a letter or symbol ("mmol/L", "%", "µg/L").
  const unit = String.raw`(?:\s*[^\d\s.+\-–].*)?`;
  const between = new RegExp(`^(${NUMBER})\\s*(?:-|–|to)\\s*(${NUMBER})${unit}$`).exec(t);
  if (between) {
    const [low, high] = [Number(between[1]), Number(between[2])];
    return low <= high ? { low, high } : null;
  }
  const above = new RegExp(`^(?:<=|<|≤)\\s*(${NUMBER})${unit}$`).exec(t);
  if (above) return { high: Number(above[1]) };
  const below = new RegExp(`^(?:>=|>|≥)\\s*(${NUMBER})${unit}$`).exec(t);
  if (below) return { low: Number(below[1]) };
  return null;
}

/** High or low against the range, or normal inside it; null when either is missing. */
export function flagOfRange(value: number | null, bounds: Bounds | null): ResultFlag | null {
  if (value === null || !Number.isFinite(value) || !bounds || (bounds.low === undefined && bounds.high === undefined)) return null;
  if (bounds.high !== undefined && value > bounds.high) return ABOVE;
  if (bounds.low !== undefined && value < bounds.low) return BELOW;
  return INSIDE;
}

// Worded apart from the lab's own "High"/"Low": this is the app's reading of the range, not the lab's.
const ABOVE = flag('abnormal', 'high', 'Above range');
const BELOW = flag('abnormal', 'low', 'Below range');
const INSIDE = flag('normal', null, 'In range');

/** An allergy that may be life-threatening (FHIR AllergyIntolerance.criticality 'high'). */
export const HIGH_CRITICALITY = flag('critical', null, 'High criticality');
