'use client';
// A result's flag as a clinician scans for it: a symbol and words ("↓↓ Critically low"), coloured
// by severity and direction — the words and the symbol say it without the colour. Normal and
// unclassified flags are plain words.
import type { ResultFlag } from '@/lib/view/viewer/flags';

/** The class a row or card takes from its flag, for its coloured edge: "flag-critical", "flag-high"… */
export function flagClass(flag: ResultFlag | null | undefined): string {
  if (!flag || flag.level === 'normal' || flag.level === 'other') return '';
  return flag.level === 'critical' ? 'flag-critical' : `flag-${flag.direction ?? 'abnormal'}`;
}

export function FlagBadge({ flag }: { flag: ResultFlag }) {
  const marked = flagClass(flag);
  if (!marked) return <span className="flag flag-plain">{flag.label}</span>;
  return (
    <span className={`flag ${marked}`}>
      {/* The words are read; the symbol is for the eye. */}
      <span aria-hidden="true">{flag.symbol} </span>
      {flag.label}
    </span>
  );
}
