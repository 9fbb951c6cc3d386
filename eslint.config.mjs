// ESLint 9 flat config (`npm run lint`; type checking is `npm run typecheck`). Non-type-checked
// rule sets only, so it stays fast on two cores: eslint's and typescript-eslint's recommended,
// Next's recommended + core-web-vitals, and the React hooks rules (with the React Compiler's).
import js from '@eslint/js';
import nextPlugin from '@next/eslint-plugin-next';
import reactHooks from 'eslint-plugin-react-hooks';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// Object URLs are made in one place, lib/view/viewer/safe-object-url.ts, which gives them an inert
// type: a blob: URL has the app's origin, and one typed SVG/HTML/XML, opened as a page, runs its
// script here (issue 27). Nor are data: URLs made from a file's bytes.
const objectUrlRules = [
  {
    selector: "MemberExpression[property.name='createObjectURL'], MemberExpression[property.value='createObjectURL']",
    message: 'Make object URLs with safeObjectUrl (lib/view/viewer/safe-object-url.ts): it keeps active types (SVG, HTML, XML, script) out of blob: URLs.',
  },
  {
    selector: "MemberExpression[property.name='readAsDataURL'], MemberExpression[property.value='readAsDataURL']",
    message: "A data: URL of a file's bytes carries its type, which may be active (SVG, HTML): use safeObjectUrl (lib/view/viewer/safe-object-url.ts).",
  },
];

/** lib/sync's deep imports for a bundle whose entry point is `entry`: the pattern, and the message. */
const deepImport = (entry) => ({
  regex: `(^@/lib/sync|(^|/)sync)/(?!${entry}$).+`,
  message: `Import lib/sync/${entry} (this bundle's entry point; lib/sync/README.md), not a module inside lib/sync.`,
});

/**
 * The same for `import('…')`, which no-restricted-imports does not see: no-restricted-syntax on an
 * ImportExpression whose source is a string (or a template without expressions) matching it.
 * esquery's /regex/ cannot hold a slash, so slashes are written \x2F.
 */
const dynamicDeepImport = (entry) => {
  const { regex, message } = deepImport(entry);
  const re = regex.replaceAll('/', '\\x2F');
  return [
    { selector: `ImportExpression[source.type='Literal'][source.value=/${re}/]`, message },
    { selector: `ImportExpression[source.type='TemplateLiteral'][source.expressions.length=0][source.quasis.0.value.cooked=/${re}/]`, message },
  ];
};

export default defineConfig(
  // Generated: builds, the service worker the build writes, the typed client's types (npm run client:generate).
  globalIgnores([
    '**/.next/**',
    'public/sw.js',
    'public/sw-background.js',
    'lib/client/v1.ts',
    'next-env.d.ts',
    'data/**',
    'bench/results/**',
    'test-results/**',
    'playwright-report/**',
    '.tmp/**',
  ]),
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  js.configs.recommended,
  tseslint.configs.recommended,
  nextPlugin.configs.recommended,
  nextPlugin.configs['core-web-vitals'],
  reactHooks.configs.flat.recommended,
  {
    languageOptions: { globals: { ...globals.browser, ...globals.node, ...globals.worker } },
    settings: { next: { rootDir: ['.', 'bench/next-noop/'] } },
    rules: {
      // A leading _ marks a value left out on purpose (`const { a: _a, ...rest } = x`, an unused parameter of a signature).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // `let d!: Device; const link = new Link(() => d.net.fetch); d = makeDevice(…, link)`: a closure needs the name before its value exists.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Control characters are matched on purpose: tokens, paths and names that contain them are refused.
      'no-control-regex': 'off',
      // The app is one Next page (app/page.tsx) with its own client-side router (app/_components/router.ts): its <a href> links are that router's, not pages for next/link.
      '@next/next/no-html-link-for-pages': 'off',
      // Every <img> shows an object URL of bytes kept on the device (offline files, thumbnails), which next/image cannot load or optimise.
      '@next/next/no-img-element': 'off',
      // React Compiler checks: the app does not use the compiler, and these flag its deliberate patterns (a "latest value" ref written in
      // render, state reset at the start of an effect that loads, Date.now in a status that re-renders on a timer, TanStack Table's API).
      'react-hooks/refs': 'off',
      'react-hooks/set-state-in-effect': 'off',
      'react-hooks/purity': 'off',
      'react-hooks/incompatible-library': 'off',
    },
  },
  {
    // Object URLs (objectUrlRules above).
    files: ['app/**', 'lib/**', 'workers/**'],
    rules: {
      'no-restricted-syntax': ['error', ...objectUrlRules],
    },
  },
  // lib/sync's entry points (lib/sync/README.md): one per bundle, so what each may load is written down. Deep imports are
  // refused outside lib/sync, static or dynamic (`import('…')`); tests and the bench are white-box and may reach inside.
  // After the object-URL block: these files get its rules too (a later block's no-restricted-syntax replaces an earlier one's).
  ...[
    // app/ also starts the sync worker (connect.ts: not in page.ts, which the sync worker's bundle reaches through lib/offline).
    { files: ['app/**'], entry: '(?:page|connect)' },
    { files: ['lib/view/**', 'lib/offline/**'], entry: 'page' },
    { files: ['workers/sync.worker.ts', 'workers/xhr-upload.ts'], entry: 'worker' },
    { files: ['workers/sw.ts'], entry: 'service-worker' },
  ].map(({ files, entry }) => ({
    files,
    rules: {
      'no-restricted-imports': ['error', { patterns: [deepImport(entry)] }],
      'no-restricted-syntax': ['error', ...objectUrlRules, ...dynamicDeepImport(entry)],
    },
  })),
  {
    // `any` on purpose: tests and benchmarks poke at untyped JSON and at internals; Kysely<any> is Kysely's pattern for code that
    // serves every schema (migrations, prepared readers); FHIR resources are walked as untyped JSON.
    files: ['tests/**', 'bench/**', 'lib/api/storage/migrations.ts', 'lib/api/storage/prepared.ts', 'lib/view/viewer/fhir.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
