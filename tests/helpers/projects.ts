// Which files a vitest project runs, where it is not a whole folder (vitest.config.ts).

/**
 * The API files that store, read, serve or remove a file's bytes: the object-store project (s3)
 * runs these. The others (tokens, devices, audit, events, limits, lists, the OpenAPI document) may
 * upload a file on the way but test nothing of where its bytes live: on S3 they would repeat the
 * SQLite run (~100 s of a CI run). A new API file about bytes belongs here.
 */
export const API_FILES_WITH_BYTES = [
  'files',
  'uploads-tus',
  'uploads-limits',
  'uploads-termination',
  'uploaded-types',
  'concurrency',
  'durability',
  'persistence',
  'storage-failures',
  'idempotency',
  'filenames',
  'hosts',
  'edges',
  'isolation',
].map((name) => `tests/api/${name}.test.ts`);
