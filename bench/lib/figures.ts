// A figure is one number a scenario reports; a target, when given, says whether it is met.
export interface Target {
  op: '>=' | '<=';
  value: number;
}

export interface Figure {
  scenario: string;
  name: string;
  value: number;
  unit: string;
  target?: Target;
  met?: boolean;
  note?: string;
}

export type FigureInput = Omit<Figure, 'scenario' | 'met'>;

export function figure(scenario: string, input: FigureInput): Figure {
  const met = input.target
    ? Number.isFinite(input.value) && (input.target.op === '>=' ? input.value >= input.target.value : input.value <= input.target.value)
    : undefined;
  return { scenario, ...input, ...(met === undefined ? {} : { met }) };
}

function formatValue(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US');
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  return value.toFixed(abs >= 1 ? 2 : 3);
}

export function formatTable(figures: Figure[]): string {
  const rows = figures.map((f) => [
    f.scenario,
    f.name,
    `${formatValue(f.value)} ${f.unit}`.trim(),
    f.target ? `${f.target.op} ${formatValue(f.target.value)}` : '',
    f.met === undefined ? '' : f.met ? 'yes' : 'NO',
  ]);
  const header = ['scenario', 'figure', 'value', 'target', 'met'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function formatMarkdown(figures: Figure[]): string {
  const rows = figures.map((f) =>
    `| ${f.scenario} | ${f.name} | ${formatValue(f.value)} ${f.unit} | ${f.target ? `${f.target.op} ${formatValue(f.target.value)}` : ''} | ${f.met === undefined ? '' : f.met ? 'yes' : '**no**'} |`,
  );
  return ['| scenario | figure | value | target | met |', '|---|---|--:|---|---|', ...rows].join('\n');
}
