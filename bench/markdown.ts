// Prints bench/results/latest.json as the Markdown table used in docs/performance.md:
//   npx tsx bench/markdown.ts [results.json]
import fs from 'node:fs';
import path from 'node:path';
import { formatMarkdown, type Figure } from './lib/figures';
import { BENCH } from './lib/proc';

const file = process.argv[2] ?? path.join(BENCH, 'results', 'latest.json');
const result = JSON.parse(fs.readFileSync(file, 'utf8')) as { figures: Figure[] };
console.log(formatMarkdown(result.figures));
