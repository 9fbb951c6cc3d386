// Multipart bodies written byte by byte, for what FormData cannot express: a file part with no
// Content-Type header at all (FormData always sends one), odd header spellings, a field named
// __proto__ built without going through an object.

export interface RawPart {
  /** The part's header lines, exactly as sent (e.g. `Content-Disposition: form-data; name="file"`). */
  headers: string[];
  body: string | Uint8Array;
}

export function rawMultipart(parts: RawPart[], boundary = 'rawboundary7f3a'): { body: Uint8Array<ArrayBuffer>; contentType: string } {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\n${part.headers.join('\r\n')}\r\n\r\n`, 'utf8'));
    chunks.push(typeof part.body === 'string' ? Buffer.from(part.body, 'utf8') : Buffer.from(part.body));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: new Uint8Array(Buffer.concat(chunks)), contentType: `multipart/form-data; boundary=${boundary}` };
}

export const field = (name: string, value: string): RawPart => ({
  headers: [`Content-Disposition: form-data; name="${name}"`],
  body: value,
});

/** A file part named `file`; `type` undefined sends no Content-Type header at all. */
export const filePart = (filename: string, body: string | Uint8Array, type?: string, headerName = 'Content-Type'): RawPart => ({
  headers: [
    `Content-Disposition: form-data; name="file"; filename="${filename}"`,
    ...(type === undefined ? [] : [`${headerName}: ${type}`]),
  ],
  body,
});
