// The object-store project's file list names files that exist: a renamed or moved file would
// otherwise drop out of the S3 run without a word.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { API_FILES_WITH_BYTES } from '../helpers/projects';

describe('vitest projects', () => {
  it('every API file the object-store project runs exists', () => {
    expect(API_FILES_WITH_BYTES.length).toBeGreaterThan(10);
    for (const file of API_FILES_WITH_BYTES) expect(fs.existsSync(file), file).toBe(true);
  });
});
