// One way to compile a TypeScript entry (the server, the token and audit commands) into a single
// ES module that plain node runs: used by the production build (build-server.mjs) and by the tests
// that run the commands as an operator does (tests/helpers/cli.ts), so both run the same output.
// Packages from node_modules stay external (native modules such as better-sqlite3 cannot be
// bundled anyway): the output must sit inside the checkout, where node finds node_modules.
import { build } from 'esbuild';

/** Compiles `source` (absolute) into `outfile` (absolute, inside the checkout). */
export async function compileNodeEntry(source, outfile, { sourcemap = true } = {}) {
  await build({
    entryPoints: [source],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap,
    logLevel: 'warning',
  });
}
