// What an upload's type is (a part with no Content-Type header declares none: it is sniffed), and
// how the asset host serves each type so that nothing uploaded can run as script or style on this
// origin.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/api';
import { startTarget } from '../helpers/target';
import type { TestServer } from '../helpers/server';
import { field, filePart, rawMultipart, type RawPart } from './raw-multipart';

let s: TestServer;
let alice: ReturnType<typeof client>;
let conversationId: string;

beforeAll(async () => {
  s = await startTarget();
  alice = client(() => s.baseUrl, s.tokens.alice);
  conversationId = (await alice.post('/v1/conversations', { json: { contact_id: 'uploaded-types' } })).body.id;
});
afterAll(() => s.stop());

const FHIR = '{"resourceType":"Observation","id":"obs-1","status":"final"}';

async function uploadRaw(...parts: RawPart[]) {
  const { body, contentType } = rawMultipart(parts);
  const r = await alice.post('/v1/files', { body, headers: { 'content-type': contentType } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

describe('a multipart part with no Content-Type header declares no type', () => {
  it('is sniffed: FHIR JSON in obs.json comes out application/fhir+json', async () => {
    const f = await uploadRaw(field('conversation_id', conversationId), filePart('obs.json', FHIR));
    expect(f.file_type).toBe('application/fhir+json');
    expect((await alice.get(`/v1/files/${f.id}`)).body.file_type).toBe('application/fhir+json');
  });

  it('falls back to the name, then to application/octet-stream (never text/plain by default)', async () => {
    expect((await uploadRaw(field('conversation_id', conversationId), filePart('notes.csv', 'a,b\n1,2'))).file_type).toBe('text/csv');
    expect((await uploadRaw(filePart('blob.dat', 'opaque'), field('conversation_id', conversationId))).file_type).toBe('application/octet-stream');
  });

  it('a part that declares text/plain keeps it, however the header is spelt', async () => {
    expect((await uploadRaw(field('conversation_id', conversationId), filePart('obs.json', FHIR, 'text/plain'))).file_type).toBe('text/plain');
    expect((await uploadRaw(field('conversation_id', conversationId), filePart('obs.json', FHIR, 'TEXT/Plain; charset=utf-8', 'content-TYPE'))).file_type).toBe(
      'text/plain',
    );
  });

  it('a declared type that is not a media type counts as none: sniffed', async () => {
    expect((await uploadRaw(field('conversation_id', conversationId), filePart('obs.json', FHIR, 'not a type'))).file_type).toBe('application/fhir+json');
  });

  it('fields with their own Content-Type do not lend it to the file part', async () => {
    const typedField: RawPart = { headers: ['Content-Disposition: form-data; name="conversation_id"', 'Content-Type: text/plain'], body: conversationId };
    expect((await uploadRaw(typedField, filePart('obs.json', FHIR))).file_type).toBe('application/fhir+json');
  });
});

const assetPath = (fileUrl: string) => {
  const u = new URL(fileUrl);
  return u.pathname + u.search;
};

async function serve(name: string, type: string | undefined, bytes = 'window.__ran = true;') {
  const f = (await alice.upload({ conversation_id: conversationId }, { name, bytes, type })).body;
  const r = await client(() => s.baseUrl).get(assetPath(f.file_url));
  expect(r.status).toBe(200);
  return { file: f, headers: r.headers };
}

// The WHATWG MIME Sniffing standard's JavaScript MIME types, and variants browsers have accepted.
// Written out here on purpose, not imported from file-types.ts: a type missing there must fail here.
const JAVASCRIPT_TYPES = [
  'application/ecmascript',
  'application/javascript',
  'application/x-ecmascript',
  'application/x-javascript',
  'text/ecmascript',
  'text/javascript',
  'text/javascript1.0',
  'text/javascript1.1',
  'text/javascript1.2',
  'text/javascript1.3',
  'text/javascript1.4',
  'text/javascript1.5',
  'text/jscript',
  'text/livescript',
  'text/x-ecmascript',
  'text/x-javascript',
];

describe('the asset host never serves anything a browser would run as script or apply as style', () => {
  it('every JavaScript MIME type and text/css: served as application/octet-stream, attachment; file_type keeps what was declared', async () => {
    for (const type of [...JAVASCRIPT_TYPES, 'text/css']) {
      const { file, headers } = await serve(`x.${type.replace(/\W/g, '')}`, type);
      expect(file.file_type, type).toBe(type);
      expect(headers.get('content-type'), type).toBe('application/octet-stream');
      expect(headers.get('content-disposition'), type).toMatch(/^attachment;/);
      expect(headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('a .js or .css name without a declared type is served as octet-stream too', async () => {
    const js = await serve('app.js', undefined);
    expect(js.file.file_type).toBe('text/javascript');
    expect(js.headers.get('content-type')).toBe('application/octet-stream');
    const css = await serve('site.css', 'text/css; charset=utf-8', 'body { color: red }');
    expect(css.file.file_type).toBe('text/css');
    expect(css.headers.get('content-type')).toBe('application/octet-stream');
  });

  it('HTML, SVG, XML and XSL are attachments', async () => {
    for (const [name, type] of [
      ['page.html', 'text/html'],
      ['page.xhtml', 'application/xhtml+xml'],
      ['image.svg', 'image/svg+xml'],
      ['doc.xml', 'text/xml'],
      ['doc.xml', 'application/xml'],
      ['style.xsl', 'text/xsl'],
      ['style.xslt', 'application/xslt+xml'],
    ]) {
      const { headers } = await serve(name!, type, '<x/>');
      expect(headers.get('content-disposition'), type).toMatch(/^attachment;/);
      expect(headers.get('content-type'), type).toBe(type);
    }
  });

  it('every asset: nosniff, CSP sandbox, CORP same-origin; harmless types stay inline with their type', async () => {
    for (const [name, type] of [
      ['scan.pdf', 'application/pdf'],
      ['photo.png', 'image/png'],
      ['notes.txt', 'text/plain'],
      ['code.js', 'text/javascript'],
    ]) {
      const { headers } = await serve(name!, type);
      expect(headers.get('x-content-type-options'), type).toBe('nosniff');
      expect(headers.get('content-security-policy'), type).toBe('sandbox');
      expect(headers.get('cross-origin-resource-policy'), type).toBe('same-origin');
      if (type !== 'text/javascript') {
        expect(headers.get('content-type')).toBe(type);
        expect(headers.get('content-disposition'), type).toMatch(/^inline;/);
      }
    }
  });
});
