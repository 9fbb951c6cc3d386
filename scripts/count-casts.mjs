// `node scripts/count-casts.mjs` (part of `npm run lint`): type assertions in lib/ and app/.
//
// A cast (`x as T`, `<T>x`) or a non-null `x!` tells the compiler something it cannot check; where
// a type can say it instead, it should (issue 31). Counted exactly with the TypeScript compiler's
// parser: AsExpression and TypeAssertion nodes except `as const` (which asserts nothing), among
// them the `as unknown as` double casts, and NonNullExpression nodes. Generated files are left out.
//
// Options: --files (counts per file, largest first); --max-as N, --max-non-null N: exit status 1
// when a count is over its ceiling, so the counts only go down (the ceilings are in package.json).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { sourceFiles } from './source-files.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FOLDERS = ['lib', 'app'];
/** Written by a generator, not by hand (npm run client:generate). */
const GENERATED = new Set(['lib/client/v1.ts']);

const isConst = (type) => ts.isTypeReferenceNode(type) && ts.isIdentifier(type.typeName) && type.typeName.text === 'const';
const isUnknown = (type) => type.kind === ts.SyntaxKind.UnknownKeyword;

/** The counts of one file's source text. */
export function countCasts(fileName, text) {
  const kind = fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, kind);
  const counts = { as: 0, asUnknownAs: 0, nonNull: 0 };
  const visit = (node) => {
    if ((ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) && !isConst(node.type)) {
      counts.as++;
      const inner = ts.isParenthesizedExpression(node.expression) ? node.expression.expression : node.expression;
      if (ts.isAsExpression(inner) && isUnknown(inner.type)) counts.asUnknownAs++;
    }
    if (ts.isNonNullExpression(node)) counts.nonNull++;
    ts.forEachChild(node, visit);
  };
  visit(source);
  return counts;
}

function main(argv) {
  const option = (name) => {
    const i = argv.indexOf(name);
    return i >= 0 ? Number(argv[i + 1]) : undefined;
  };
  const perFile = [];
  const total = { as: 0, asUnknownAs: 0, nonNull: 0 };
  for (const folder of FOLDERS) {
    for (const file of sourceFiles(path.join(ROOT, folder), ['.ts', '.tsx', '.mts'])) {
      const rel = path.relative(ROOT, file).split(path.sep).join('/');
      if (GENERATED.has(rel)) continue;
      const counts = countCasts(rel, fs.readFileSync(file, 'utf8'));
      for (const key of Object.keys(total)) total[key] += counts[key];
      if (counts.as + counts.nonNull > 0) perFile.push([rel, counts]);
    }
  }
  if (argv.includes('--files')) {
    perFile.sort((a, b) => b[1].as + b[1].nonNull - (a[1].as + a[1].nonNull));
    for (const [rel, c] of perFile) console.log(`${String(c.as).padStart(4)} as ${String(c.nonNull).padStart(4)} !  ${rel}`);
  }
  console.log(`${FOLDERS.join(', ')}: ${total.as} casts (${total.asUnknownAs} \`as unknown as\`), ${total.nonNull} non-null assertions`);
  const maxAs = option('--max-as');
  const maxNonNull = option('--max-non-null');
  let over = false;
  if (maxAs !== undefined && total.as > maxAs) {
    console.error(`More casts than the ceiling (${total.as} > ${maxAs}): let a type say it (an annotation, satisfies, narrowing).`);
    over = true;
  }
  if (maxNonNull !== undefined && total.nonNull > maxNonNull) {
    console.error(`More non-null assertions than the ceiling (${total.nonNull} > ${maxNonNull}).`);
    over = true;
  }
  if (over) process.exitCode = 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
