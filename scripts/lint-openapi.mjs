// `npm run lint:openapi`: writes the OpenAPI document — built by the same function that
// /v1/openapi.json serves (lib/api/openapi.ts), no server started — to a temporary file and
// lints it with Redocly (recommended rules) and Spectral (spectral:oas). Fails on any error of
// either; warnings are shown, not fatal.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-openapi-'));
const file = path.join(dir, 'openapi.json');
// Quiet, and nothing sent anywhere: no telemetry, no update check.
const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_UPDATE_NOTIFIER: '1' };

function run(command, args) {
  console.log(`\n$ ${path.basename(command)} ${args.join(' ')}`);
  return spawnSync(command, args, { stdio: 'inherit', cwd: root, env }).status ?? 1;
}

let failed = 0;
try {
  const write = `import { openApiDocument } from './lib/api/openapi.ts';
import fs from 'node:fs';
fs.writeFileSync(${JSON.stringify(file)}, JSON.stringify(openApiDocument(), null, 2));`;
  if (run(bin('tsx'), ['--eval', write]) !== 0) throw new Error('the document could not be written');
  failed += run(bin('redocly'), ['lint', '--config', 'scripts/openapi/redocly.yaml', file]) === 0 ? 0 : 1;
  failed += run(bin('spectral'), ['lint', '--ruleset', 'scripts/openapi/spectral.yaml', '--fail-severity', 'error', file]) === 0 ? 0 : 1;
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
console.log(failed ? `\nlint:openapi: ${failed} of 2 linters found errors` : '\nlint:openapi: no errors');
process.exit(failed ? 1 : 0);
