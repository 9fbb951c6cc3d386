// Filenames that would display as something else are refused on upload and on rename; names in
// scripts that need joiners (and emoji sequences) are kept.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, expectError } from '../helpers/api';
import { startTarget } from '../helpers/target';
import type { TestServer } from '../helpers/server';
import { field, filePart, rawMultipart } from './raw-multipart';

let s: TestServer;
let alice: ReturnType<typeof client>;
let conversationId: string;

beforeAll(async () => {
  s = await startTarget();
  alice = client(() => s.baseUrl, s.tokens.alice);
  conversationId = (await alice.post('/v1/conversations', { json: { contact_id: 'filenames' } })).body.id;
});
afterAll(() => s.stop());

function storedBlobs(): string[] {
  const root = path.join(s.dataDir, 'files');
  if (!fs.existsSync(root)) return [];
  return fs.readdirSync(root).flatMap((shard) => fs.readdirSync(path.join(root, shard)));
}

const REFUSED = {
  'right-to-left override (shows as invoiceexe.pdf)': 'invoice\u202Efdp.exe',
  'left-to-right embedding': 'a\u202Ab.txt',
  'right-to-left embedding': 'a\u202Bb.txt',
  'pop directional formatting': 'a\u202Cb.txt',
  'left-to-right override': 'a\u202Db.txt',
  'left-to-right isolate': 'a\u2066b.txt',
  'right-to-left isolate': 'a\u2067b.txt',
  'first strong isolate': 'a\u2068b.txt',
  'pop directional isolate': 'a\u2069b.txt',
  'zero-width space': 'scan\u200B.pdf',
  'byte order mark': '\uFEFFreport.pdf',
  'left-to-right mark': 'a\u200Eb.txt',
  'right-to-left mark': 'a\u200Fb.txt',
  'arabic letter mark': 'a\u061Cb.txt',
  'word joiner': 'a\u2060b.txt',
  'soft hyphen': 'in\u00ADvoice.pdf',
  'tag characters outside an emoji flag': 'report\u{E0041}\u{E0042}.pdf',
  'line separator': 'a\u2028b.txt',
  'paragraph separator': 'a\u2029b.txt',
  'tab (control)': 'tab\there.txt',
  'escape (control)': 'a\u001bb.txt',
  'delete (control)': 'a\u007fb.txt',
  'C1 control': 'a\u0085b.txt',
  'a lone surrogate': 'a\uD800b.txt',
};

const KEPT = {
  'Persian with a zero-width non-joiner': 'می‌خواهم.pdf',
  'Devanagari with a zero-width joiner': 'क्‍ष-report.pdf',
  'an emoji ZWJ sequence': '👩‍⚕️ notes.txt',
  'an emoji flag tag sequence (Scotland)': '\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F} trip.jpg',
  'accents and dashes': 'Résumé – ü.txt',
};

describe('filenames', () => {
  it('upload refuses control and invisible format characters with a plain message; nothing stored', async () => {
    const blobs = storedBlobs().length;
    // A lone surrogate cannot travel as UTF-8 at all; the rename case (JSON escapes) covers it.
    for (const [what, name] of Object.entries(REFUSED).filter(([, n]) => !/\p{Cs}/u.test(n))) {
      // filename* (RFC 5987): the exact code points, whatever a multipart encoder would escape
      const { body, contentType } = rawMultipart([
        field('conversation_id', conversationId),
        {
          headers: [`Content-Disposition: form-data; name="file"; filename*=UTF-8''${encodeURIComponent(name)}`, 'Content-Type: text/plain'],
          body: 'x',
        },
      ]);
      const r = await alice.post('/v1/files', { body, headers: { 'content-type': contentType } });
      expectError(r, 400, 'parameter_invalid', 'file');
      expect(r.body.message, what).toBe("The filename can't contain / or \\ or invisible control characters");
    }
    expect(storedBlobs().length).toBe(blobs);
  });

  it('rename refuses them too and changes nothing', async () => {
    const f = (await alice.upload({ conversation_id: conversationId }, { name: 'plain.txt', bytes: 'p' })).body;
    for (const [what, name] of Object.entries(REFUSED)) {
      const r = await alice.put(`/v1/files/${f.id}`, { json: { filename: name } });
      expectError(r, 400, 'parameter_invalid', 'filename');
      expect(r.body.message, what).toBe("filename can't contain / or \\ or invisible control characters");
    }
    expectError(await alice.put(`/v1/files/${f.id}`, { form: { filename: 'invoice\u202Efdp.exe' } }), 400, 'parameter_invalid', 'filename');
    expect((await alice.get(`/v1/files/${f.id}`)).body).toEqual(f);
  });

  it('keeps names whose scripts need ZWJ/ZWNJ, emoji sequences and ordinary Unicode, on upload and rename', async () => {
    for (const [what, name] of Object.entries(KEPT)) {
      const { body, contentType } = rawMultipart([field('conversation_id', conversationId), filePart(name, 'k', 'text/plain')]);
      const up = await alice.post('/v1/files', { body, headers: { 'content-type': contentType } });
      expect(up.status, `${what}: ${JSON.stringify(up.body)}`).toBe(201);
      expect(up.body.filename, what).toBe(name);
      const renamed = await alice.put(`/v1/files/${up.body.id}`, { json: { filename: `2 ${name}` } });
      expect(renamed.status, what).toBe(200);
      expect(renamed.body.filename, what).toBe(`2 ${name}`);
    }
  });
});
