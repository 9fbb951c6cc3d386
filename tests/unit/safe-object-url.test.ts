// Object URLs carry an inert type whatever the file declares (issue 27): a raster image's type when
// the bytes are that image, else application/octet-stream — never SVG, HTML, XML, XSL or script,
// which a blob: URL of the app's origin would run as a page. Also the CSP hash of the SVG
// renderer's frame script, and the markup check that sends an SVG to that frame.
import { createHash } from 'node:crypto';
import { resolveObjectURL } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { contentSecurityPolicy } from '../../lib/security';
import { inertType, NEUTRAL_TYPE, safeObjectUrl, sniffRaster } from '../../lib/view/viewer/safe-object-url';
import { SVG_FRAME_SCRIPT } from '../../lib/view/viewer/svg-frame-script';
import { looksLikeMarkup } from '../../lib/view/viewer/svg-raster';

const bytes = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const SVG = new TextEncoder().encode('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
const SVG_BOM = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('\n  <svg xmlns="http://www.w3.org/2000/svg"/>')]);
const HTML = new TextEncoder().encode('<!doctype html><script>alert(1)</script>');
const JS = new TextEncoder().encode('fetch("/v1/conversations")');
const PNG = bytes('\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR');
const JPEG = bytes('\xff\xd8\xff\xe0\x00\x10JFIF');
const GIF = bytes('GIF89a\x01\x00\x01\x00');
const WEBP = bytes('RIFF\x24\x00\x00\x00WEBPVP8 ');
const AVIF = bytes('\x00\x00\x00\x1cftypavif\x00\x00\x00\x00');
const BMP = bytes(`BM${'\x00'.repeat(30)}`);
const ICO = bytes('\x00\x00\x01\x00\x01\x00\x10\x10');
// A PNG signature followed by markup: a page of it is a (broken) picture, never a document.
const POLYGLOT = new Uint8Array([...PNG, ...HTML]);

describe('inertType', () => {
  const active: Array<[string, Uint8Array]> = [
    ['image/svg+xml', SVG],
    ['image/svg+xml; charset=utf-8', SVG],
    ['IMAGE/SVG+XML', SVG],
    [' Image/Svg+Xml ;charset=UTF-8', SVG_BOM],
    ['text/html', HTML],
    ['text/html; charset=utf-8', HTML],
    ['application/xhtml+xml', HTML],
    ['text/xml', SVG],
    ['application/xml', SVG],
    ['text/xsl', SVG],
    ['application/xslt+xml', SVG],
    ['application/javascript', JS],
    ['text/javascript', JS],
    ['application/ecmascript', JS],
    ['text/plain', HTML],
    ['application/pdf', HTML],
    ['multipart/x-mixed-replace', HTML],
    // No type at all, SVG or HTML bytes: a browser would sniff them into a document.
    ['', SVG],
    ['', SVG_BOM],
    ['', HTML],
    // A raster type declared over markup bytes: the bytes decide.
    ['image/png', SVG],
    ['image/jpeg', HTML],
    ['image/gif', new Uint8Array()],
  ];
  it.each(active)('%j with active or unknown bytes is application/octet-stream', (declared, data) => {
    expect(inertType(declared, data)).toBe(NEUTRAL_TYPE);
  });

  const raster: Array<[string, Uint8Array, string]> = [
    ['image/png', PNG, 'image/png'],
    ['IMAGE/PNG; x=y', PNG, 'image/png'],
    ['image/jpeg', JPEG, 'image/jpeg'],
    ['image/gif', GIF, 'image/gif'],
    ['image/webp', WEBP, 'image/webp'],
    ['image/avif', AVIF, 'image/avif'],
    ['image/bmp', BMP, 'image/bmp'],
    ['image/x-icon', ICO, 'image/x-icon'],
    // Declared wrong or not at all, the signature names the type; an active declared type is ignored.
    ['image/png', JPEG, 'image/jpeg'],
    ['', PNG, 'image/png'],
    ['image/svg+xml', PNG, 'image/png'],
    ['text/html', POLYGLOT, 'image/png'],
  ];
  it.each(raster)('%j with raster bytes is the signature’s type', (declared, data, expected) => {
    expect(inertType(declared, data)).toBe(expected);
  });

  it('a download stays application/octet-stream, even for an image', () => {
    expect(inertType('application/octet-stream', PNG)).toBe(NEUTRAL_TYPE);
    expect(inertType('Application/Octet-Stream; x=1', SVG)).toBe(NEUTRAL_TYPE);
  });

  it('never answers a type other than a raster image’s or octet-stream', () => {
    const types = [...active.map(([t]) => t), ...raster.map(([t]) => t), 'application/octet-stream'];
    const all = [SVG, SVG_BOM, HTML, JS, PNG, JPEG, GIF, WEBP, AVIF, BMP, ICO, POLYGLOT, new Uint8Array()];
    for (const t of types) for (const data of all) expect(inertType(t, data)).toMatch(/^(image\/(png|jpeg|gif|webp|avif|bmp|x-icon)|application\/octet-stream)$/);
  });
});

describe('sniffRaster', () => {
  it('knows the raster signatures and nothing else', () => {
    expect([PNG, JPEG, GIF, WEBP, AVIF, BMP, ICO].map(sniffRaster)).toEqual(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/bmp', 'image/x-icon']);
    expect([SVG, SVG_BOM, HTML, JS, bytes('RIFF\x00\x00\x00\x00WAVE'), bytes('BM'), new Uint8Array()].map(sniffRaster)).toEqual([null, null, null, null, null, null, null]);
  });
});

describe('safeObjectUrl', () => {
  it('makes a blob: URL whose blob carries the inert type', async () => {
    for (const [declared, data, expected] of [
      ['image/svg+xml; charset=utf-8', SVG, NEUTRAL_TYPE],
      ['', SVG],
      ['text/html', HTML, NEUTRAL_TYPE],
      ['image/png', PNG, 'image/png'],
    ] as Array<[string, Uint8Array, string?]>) {
      const url = safeObjectUrl(data, declared);
      expect(url).toMatch(/^blob:/);
      const blob = resolveObjectURL(url)!;
      expect(blob.type).toBe(expected ?? NEUTRAL_TYPE);
      expect(new Uint8Array(await blob.arrayBuffer())).toEqual(data);
      URL.revokeObjectURL(url);
    }
  });
});

describe('the SVG renderer frame', () => {
  it('is allowed by the CSP by its exact hash, and only it', () => {
    const hash = `'sha256-${createHash('sha256').update(SVG_FRAME_SCRIPT).digest('base64')}'`;
    const scriptSrc = contentSecurityPolicy(['sha256-next']).split('; ').find((d) => d.startsWith('script-src '))!;
    expect(scriptSrc).toBe(`script-src 'self' 'wasm-unsafe-eval' 'sha256-next' ${hash}`);
    expect(contentSecurityPolicy([]).split('; ').find((d) => d.startsWith('script-src '))).toBe(`script-src 'self' 'wasm-unsafe-eval' ${hash}`);
    // Put in a srcdoc between <script> tags: nothing in it may end the element.
    expect(SVG_FRAME_SCRIPT).not.toMatch(/<\/script/i);
  });

  it('gets what starts like markup; raster bytes and plain data do not', () => {
    expect([SVG, SVG_BOM, HTML].map(looksLikeMarkup)).toEqual([true, true, true]);
    expect([PNG, JPEG, JS, new Uint8Array()].map(looksLikeMarkup)).toEqual([false, false, false, false]);
  });
});
