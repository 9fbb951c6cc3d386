// CSV (RFC 4180: quoted fields, doubled quotes, line breaks inside quotes) into rows for a table.
// The delimiter is guessed from the first line (comma, semicolon — common in European exports — or
// tab). At most `maxRows` rows: the rest is counted, not parsed into cells.

export interface CsvTable {
  rows: string[][];
  /** Rows not shown because of the limit. */
  more: boolean;
  /** A quote left open at the end: the file is probably cut short. */
  problem: string | null;
}

export function guessDelimiter(text: string): string {
  const first = text.slice(0, text.indexOf('\n') === -1 ? text.length : text.indexOf('\n'));
  const counts = [',', ';', '\t'].map((d) => [d, first.split(d).length - 1] as const);
  counts.sort((a, b) => b[1] - a[1]);
  return counts[0]![1] > 0 ? counts[0]![0] : ',';
}

export function parseCsv(text: string, maxRows = 2000, delimiter = guessDelimiter(text)): CsvTable {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  const endRow = () => {
    row.push(field);
    field = '';
    // A trailing empty line is not a row.
    if (!(row.length === 1 && row[0] === '')) rows.push(row);
    row = [];
  };
  while (i < text.length) {
    if (rows.length >= maxRows) return { rows, more: true, problem: null };
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
      } else field += c;
      i++;
      continue;
    }
    if (c === '"' && field === '') quoted = true;
    else if (c === delimiter) {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      endRow();
      if (c === '\r' && text[i + 1] === '\n') i++;
    } else field += c;
    i++;
  }
  if (field !== '' || row.length > 0) endRow();
  return { rows, more: false, problem: quoted ? 'A quoted field is never closed: the file may be cut short. What could be read is shown.' : null };
}
