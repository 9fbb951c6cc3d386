// Draws the app icons (a speech bubble holding a document) as PNGs, with no image library:
// a supersampled rasteriser and a minimal PNG encoder. Run once; the PNGs are committed.
import fs from 'node:fs';
import zlib from 'node:zlib';

const THEME = [11, 92, 173];
const WHITE = [255, 255, 255];

function crc32(buf) {
  let c = ~0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return ~c >>> 0;
}
function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}
function png(size, pixel) {
  const rows = [];
  for (let y = 0; y < size; y++) {
    const row = Buffer.alloc(1 + size * 4);
    for (let x = 0; x < size; x++) row.set(pixel(x, y), 1 + x * 4);
    rows.push(row);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8;
  ihdr[9] = 6;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(Buffer.concat(rows), { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

// Shapes in unit coordinates (0..1). `safe` shrinks the artwork into the maskable safe zone.
function shade(u, v, { rounded, safe }) {
  const s = safe ? 0.62 : 0.78;
  const x = (u - 0.5) / s + 0.5;
  const y = (v - 0.5) / s + 0.5;
  const inBg = rounded ? roundedRect(u, v, 0, 0, 1, 1, 0.22) : true;
  if (!inBg) return null;
  const bubble = roundedRect(x, y, 0.08, 0.1, 0.92, 0.72, 0.16) || triangle(x, y, [0.22, 0.66], [0.42, 0.7], [0.2, 0.9]);
  const doc = roundedRect(x, y, 0.33, 0.22, 0.67, 0.6, 0.03);
  const line = [0.32, 0.4, 0.48].some((ly) => y > ly && y < ly + 0.035 && x > 0.39 && x < 0.61);
  if (doc && !line) return THEME;
  if (bubble) return WHITE;
  return THEME;
}
function roundedRect(x, y, x0, y0, x1, y1, r) {
  if (x < x0 || x > x1 || y < y0 || y > y1) return false;
  const cx = Math.min(Math.max(x, x0 + r), x1 - r);
  const cy = Math.min(Math.max(y, y0 + r), y1 - r);
  return (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
}
function triangle(x, y, a, b, c) {
  const sign = (p, q, r) => (p[0] - r[0]) * (q[1] - r[1]) - (q[0] - r[0]) * (p[1] - r[1]);
  const p = [x, y];
  const d1 = sign(p, a, b), d2 = sign(p, b, c), d3 = sign(p, c, a);
  return !((d1 < 0 || d2 < 0 || d3 < 0) && (d1 > 0 || d2 > 0 || d3 > 0));
}
function render(size, options) {
  const N = 4; // 4x4 supersampling
  return png(size, (px, py) => {
    let r = 0, g = 0, b = 0, a = 0;
    for (let i = 0; i < N; i++)
      for (let j = 0; j < N; j++) {
        const c = shade((px + (i + 0.5) / N) / size, (py + (j + 0.5) / N) / size, options);
        if (c) { r += c[0]; g += c[1]; b += c[2]; a += 1; }
      }
    const n = N * N;
    return a ? [Math.round(r / a), Math.round(g / a), Math.round(b / a), Math.round((255 * a) / n)] : [0, 0, 0, 0];
  });
}

const out = 'public/icons';
fs.mkdirSync(out, { recursive: true });
for (const size of [192, 512]) {
  fs.writeFileSync(`${out}/icon-${size}.png`, render(size, { rounded: true, safe: false }));
  fs.writeFileSync(`${out}/maskable-${size}.png`, render(size, { rounded: false, safe: true }));
}
fs.writeFileSync(`${out}/apple-touch-icon.png`, render(180, { rounded: false, safe: false }));
console.log('icons written to', out);
