// The observation of busboy's own part headers (lib/api/http/part-headers.ts): each 'file' event
// sees exactly the headers of its part — not a neighbouring field's — however the bytes are chunked.
import busboy from 'busboy';
import { describe, expect, it } from 'vitest';
import { declaredContentType, observePartHeaders } from '../../lib/api/http/part-headers';
import { field, filePart, rawMultipart } from '../api/raw-multipart';

interface Seen {
  kind: 'file' | 'field';
  name: string;
  busboyType?: string;
  declared: string | undefined;
}

function parse(body: Uint8Array, contentType: string, chunkSize: number): Promise<Seen[]> {
  return new Promise((resolve, reject) => {
    const parser = busboy({ headers: { 'content-type': contentType } });
    const headers = observePartHeaders(parser);
    const seen: Seen[] = [];
    parser.on('file', (name, stream, info) => {
      seen.push({ kind: 'file', name, busboyType: info.mimeType, declared: declaredContentType(headers.current()) });
      stream.resume();
    });
    parser.on('field', (name) => seen.push({ kind: 'field', name, declared: undefined }));
    parser.on('close', () => resolve(seen));
    parser.on('error', reject);
    for (let i = 0; i < body.length; i += chunkSize) parser.write(body.subarray(i, i + chunkSize));
    parser.end();
  });
}

describe('observePartHeaders', () => {
  const { body, contentType } = rawMultipart([
    { headers: ['Content-Disposition: form-data; name="a"', 'Content-Type: text/x-field'], body: 'A' },
    filePart('one.json', '{"resourceType":"Patient"}'),
    field('b', 'B'),
    filePart('two.txt', 'plain', 'text/plain'),
    filePart('three.bin', 'x', 'Application/PDF; x=1', 'CONTENT-type'),
    { headers: ['Content-Disposition: form-data; name="file"; filename="four"', 'Content-Type: no type at all'], body: 'y' },
  ]);

  for (const chunkSize of [1, 7, 64, body.length]) {
    it(`reports each file part's own Content-Type, or none (chunks of ${chunkSize} bytes)`, async () => {
      expect(await parse(body, contentType, chunkSize)).toEqual([
        { kind: 'field', name: 'a', declared: undefined },
        // busboy alone cannot tell these two apart: both say text/plain
        { kind: 'file', name: 'file', busboyType: 'text/plain', declared: undefined },
        { kind: 'field', name: 'b', declared: undefined },
        { kind: 'file', name: 'file', busboyType: 'text/plain', declared: 'text/plain' },
        { kind: 'file', name: 'file', busboyType: 'application/pdf', declared: 'Application/PDF; x=1' },
        { kind: 'file', name: 'file', busboyType: 'text/plain', declared: 'no type at all' },
      ]);
    });
  }

  it('refuses to guess when busboy is not the busboy it was written for', () => {
    const parser = busboy({ headers: { 'content-type': contentType } });
    (parser as unknown as { _hparser: unknown })._hparser = {};
    expect(() => observePartHeaders(parser)).toThrow(/busboy internals changed/);
  });
});
