// Security headers for the app's pages. The Content-Security-Policy allows scripts only from this
// origin plus the exact inline scripts Next.js put into the prerendered page (by hash, computed
// after the build) and the SVG renderer's frame script (lib/view/viewer/svg-frame-script.ts, which
// runs in a sandboxed frame of an opaque origin), so no other inline script can run.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { SVG_FRAME_SCRIPT } from './view/viewer/svg-frame-script';

export const CSP_HASHES_FILE = path.join('.next', 'csp-hashes.json');

/** The CSP source of the SVG renderer's frame script: the srcdoc frame inherits the page's policy. */
export const SVG_FRAME_SCRIPT_HASH = `sha256-${createHash('sha256').update(SVG_FRAME_SCRIPT, 'utf8').digest('base64')}`;

/**
 * `connectOrigins`: other origins the app's code (the page and its service worker) may read from —
 * the object store's, when /files/… redirects there (S3_PRESIGNED_REDIRECT): the viewer and the
 * offline copies read a file's bytes after the redirect.
 */
export function contentSecurityPolicy(scriptHashes: readonly string[], connectOrigins: readonly string[] = []): string {
  return [
    "default-src 'self'",
    // 'wasm-unsafe-eval' lets WebAssembly compile (Argon2id for the device PIN, lib/view/lock); it
    // allows no JavaScript eval.
    `script-src 'self' 'wasm-unsafe-eval' ${[...scriptHashes, SVG_FRAME_SCRIPT_HASH].map((h) => `'${h}'`).join(' ')}`,
    // React renders style attributes; styles cannot run code.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    ["connect-src 'self'", ...connectOrigins].join(' '),
    "worker-src 'self' blob:",
    "manifest-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function appSecurityHeaders(scriptHashes: readonly string[], connectOrigins: readonly string[] = []): Record<string, string> {
  return {
    'Content-Security-Policy': contentSecurityPolicy(scriptHashes, connectOrigins),
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'same-origin',
    'X-Frame-Options': 'DENY',
    'Permissions-Policy': 'geolocation=(), microphone=(), camera=(self)',
  };
}

/** The inline-script hashes the build recorded; none (so no inline script runs) if there is no build. */
export function readScriptHashes(root = process.cwd()): string[] {
  try {
    return z.array(z.string()).parse(JSON.parse(fs.readFileSync(path.join(root, CSP_HASHES_FILE), 'utf8')));
  } catch {
    return [];
  }
}
