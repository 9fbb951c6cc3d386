'use client';
// A PDF rendered in the app by pdf.js, in its own worker; this module (and pdf.js) loads only when
// a PDF is opened. Pages are drawn when they come near the screen, at the screen's width times the
// zoom, with a text layer so text can be selected and found. Nothing of the PDF runs: no
// JavaScript (pdf.js does not run it unless asked), no eval (isEvalSupported: false), no XFA forms.
import { useEffect, useRef, useState } from 'react';
import type { PDFDocumentProxy } from 'pdfjs-dist';
import { Problem } from './Raw';

type PdfJs = typeof import('pdfjs-dist');
let loading: Promise<PdfJs> | null = null;

function loadPdfJs(): Promise<PdfJs> {
  loading ??= import('pdfjs-dist').then(
    (pdfjs) => {
      pdfjs.GlobalWorkerOptions.workerPort = new Worker(new URL('pdfjs-dist/build/pdf.worker.min.mjs', import.meta.url), { type: 'module' });
      return pdfjs;
    },
    (error: unknown) => {
      // Not loaded (no network, not cached yet): the next PDF opened tries again.
      loading = null;
      throw error;
    },
  );
  return loading;
}

const MAX_PAGES = 200;

export function PdfView({ bytes, name, onOpened }: { bytes: Uint8Array; name: string; onOpened?(): void }) {
  const [pdf, setPdf] = useState<{ doc: PDFDocumentProxy; pdfjs: PdfJs } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [zoom, setZoom] = useState(1);
  const [width, setWidth] = useState(0);
  const holder = useRef<HTMLDivElement>(null);
  const opened = useRef(onOpened);
  opened.current = onOpened;

  useEffect(() => {
    let task: ReturnType<PdfJs['getDocument']> | null = null;
    let cancelled = false;
    loadPdfJs()
      .then(async (pdfjs) => {
        // A copy: pdf.js hands the buffer to its worker (the original stays for Download).
        task = pdfjs.getDocument({ data: bytes.slice(), isEvalSupported: false, enableXfa: false });
        const doc = await task.promise;
        if (cancelled) return;
        setPdf({ doc, pdfjs });
        opened.current?.();
      })
      .catch((e: unknown) => {
        if (!cancelled) setError(e instanceof Error ? e.message : String(e));
      });
    return () => {
      cancelled = true;
      void task?.destroy();
    };
  }, [bytes]);

  useEffect(() => {
    const element = holder.current;
    if (!element) return;
    const observer = new ResizeObserver(() => setWidth(element.clientWidth));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  const pages = pdf ? Math.min(pdf.doc.numPages, MAX_PAGES) : 0;
  return (
    <>
      {error && <Problem>This PDF could not be read ({error}). It may be damaged or cut short; download it to try another app.</Problem>}
      {pdf && (
        <div className="zoom-bar" role="group" aria-label="Zoom">
          <span className="page-count">
            {pdf.doc.numPages} {pdf.doc.numPages === 1 ? 'page' : 'pages'}
          </span>
          <button type="button" onClick={() => setZoom((z) => Math.max(0.5, z / 1.25))} disabled={zoom <= 0.5} aria-label="Zoom out">−</button>
          <output aria-live="polite" aria-label="Zoom level">{Math.round(zoom * 100)}%</output>
          <button type="button" onClick={() => setZoom((z) => Math.min(4, z * 1.25))} disabled={zoom >= 4} aria-label="Zoom in">+</button>
          <button type="button" onClick={() => setZoom(1)} disabled={zoom === 1}>Fit width</button>
        </div>
      )}
      <div className="pdf-pages" ref={holder} aria-label={`Pages of ${name}`} role="region" tabIndex={0}>
        {!pdf && !error && <p className="empty">Opening the PDF…</p>}
        {pdf && width > 0 && Array.from({ length: pages }, (_, i) => <PdfPage key={i} pdf={pdf} number={i + 1} width={(width - 2) * zoom} />)}
      </div>
      {pdf && pdf.doc.numPages > MAX_PAGES && <Problem>Only the first {MAX_PAGES} of {pdf.doc.numPages} pages are shown; download the file for the rest.</Problem>}
    </>
  );
}

function PdfPage({ pdf, number, width }: { pdf: { doc: PDFDocumentProxy; pdfjs: PdfJs }; number: number; width: number }) {
  const box = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const text = useRef<HTMLDivElement>(null);
  const [near, setNear] = useState(number === 1);
  const [height, setHeight] = useState(width * 1.414);
  const [failed, setFailed] = useState<string | null>(null);

  useEffect(() => {
    if (near || !box.current) return;
    const observer = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && setNear(true), { rootMargin: '400px' });
    observer.observe(box.current);
    return () => observer.disconnect();
  }, [near]);

  useEffect(() => {
    if (!near || !canvas.current || !text.current) return;
    let cancelled = false;
    let render: { cancel(): void } | null = null;
    (async () => {
      const page = await pdf.doc.getPage(number);
      const scale = width / page.getViewport({ scale: 1 }).width;
      const viewport = page.getViewport({ scale });
      if (cancelled || !canvas.current || !text.current) return;
      setHeight(viewport.height);
      const ratio = window.devicePixelRatio || 1;
      canvas.current.width = Math.floor(viewport.width * ratio);
      canvas.current.height = Math.floor(viewport.height * ratio);
      const task = page.render({ canvas: canvas.current, viewport, transform: ratio === 1 ? undefined : [ratio, 0, 0, ratio, 0, 0] });
      render = task;
      await task.promise;
      if (cancelled) return;
      text.current.replaceChildren();
      text.current.style.setProperty('--total-scale-factor', String(scale));
      await new pdf.pdfjs.TextLayer({ textContentSource: page.streamTextContent(), container: text.current, viewport }).render();
    })().catch((e: unknown) => {
      if (!cancelled && !(e instanceof Error && e.name === 'RenderingCancelledException')) setFailed(e instanceof Error ? e.message : String(e));
    });
    return () => {
      cancelled = true;
      render?.cancel();
    };
  }, [near, pdf, number, width]);

  return (
    <div className="pdf-page" ref={box} style={{ width, height }} aria-label={`Page ${number}`} role="group">
      <canvas ref={canvas} style={{ width, height }} aria-hidden="true" />
      <div className="textLayer" ref={text} />
      {failed && <Problem>Page {number} could not be drawn ({failed}).</Problem>}
    </div>
  );
}
