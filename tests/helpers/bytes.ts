// Test bytes that differ everywhere (xorshift), so a byte range put in the wrong place shows.
export function pattern(size: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(size);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    bytes[i] = x & 0xff;
  }
  return bytes;
}
