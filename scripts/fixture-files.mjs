// Small real files made in code, for the browser tests and the README's screenshots: a one-page
// PDF (Helvetica text; the xref offsets computed here) and a PNG from RGB pixels (zlib and CRC-32
// from Node). Plain JavaScript so that scripts run it with plain node.
import zlib from 'node:zlib';

/** A one-page PDF of `width`×`height` points whose page draws `content` (a content stream, font /F1 = Helvetica). */
export function pdfOf(content, width = 300, height = 200) {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${width} ${height}] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>`,
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** A 300×200 pt PDF with one line of text. */
export function textPdf(text) {
  return pdfOf(`BT /F1 24 Tf 30 100 Td (${text}) Tj ET`);
}

/** Rows of RGB pixels for pngOf: `width * 3 + 1` bytes a row (the first, the row's filter, set by pngOf), white. */
export function whiteRows(width, height) {
  return Buffer.alloc((width * 3 + 1) * height, 0xff);
}

/** A PNG of `width`×`height` RGB pixels, from rows as whiteRows lays them out. */
export function pngOf(width, height, rows) {
  for (let y = 0; y < height; y++) rows[y * (width * 3 + 1)] = 0;
  const chunk = (type, data) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(Buffer.concat([Buffer.from(type), data])));
    return Buffer.concat([length, Buffer.from(type), data, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', zlib.deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}
