// A byte stream's chunks, as Buffers. Node types what a Readable yields as `any`; the streams
// here carry bytes (a Node request or response: Buffers; a Web body through Readable.fromWeb:
// Uint8Arrays), and this says so by checking, not by a cast.

/** A chunk of a byte stream as a Buffer (a Uint8Array is viewed, not copied); anything else is a TypeError. */
export function chunkBytes(chunk: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw new TypeError(`a byte stream gave a chunk that is not bytes (${typeof chunk})`);
}
