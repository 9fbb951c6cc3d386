'use client';
// A PDF rendered in the app by pdf.js, in its own worker; this module (and pdf.js) loads only when
// a PDF is opened. Pages are drawn when they come near the screen, at the screen's width times the
// zoom, with a text layer so text can be selected and found. Nothing of the PDF runs: no
// JavaScript (pdf.js does not run it unless asked), no eval (isEvalSupported: false), no XFA forms.
// A pinch on the pages zooms the document, not the app: the pages refuse the browser's pinch-zoom
// (touch-action: pan-x pan-y, viewer.css) and two fingers' touches set the viewer's zoom, shown
// as a scaled preview while they move and drawn again at that zoom when they lift.
import { useEffect, useLayoutEffect, useRef, useState, type TouchEvent } from 'react';
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
const MIN_ZOOM = 0.5;
const MAX_ZOOM = 4;
const clampZoom = (zoom: number) => Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, zoom));

/** A pinch under way: the fingers' first distance, the zoom then, and the point between them. */
type Pinch = { distance: number; from: number; to: number; content: { x: number; y: number }; client: { x: number; y: number } };

const spread = (touches: TouchEvent['touches']) => Math.hypot(touches[0].clientX - touches[1].clientX, touches[0].clientY - touches[1].clientY);

export function PdfView({ bytes, name, onOpened }: { bytes: Uint8Array; name: string; onOpened?(): void }) {
  const [pdf, setPdf] = useState<{ doc: PDFDocumentProxy; pdfjs: PdfJs } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [zoom, setZoom] = useState(1);
  const [width, setWidth] = useState(0);
  const holder = useRef<HTMLDivElement>(null);
  const [pinch, setPinch] = useState<Pinch | null>(null);
  // The point the fingers were on when they lifted: kept under them once drawn at the new zoom.
  const anchor = useRef<Pinch | null>(null);
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

  useLayoutEffect(() => {
    const a = anchor.current;
    const element = holder.current;
    anchor.current = null;
    if (!a || !element) return;
    const ratio = a.to / a.from;
    const box = element.getBoundingClientRect();
    element.scrollLeft = a.content.x * ratio - (a.client.x - box.left);
    window.scrollTo({ top: window.scrollY + box.top + a.content.y * ratio - a.client.y });
  }, [zoom]);

  const touchStart = (e: TouchEvent<HTMLDivElement>) => {
    const element = holder.current;
    if (e.touches.length !== 2 || !element) return;
    const box = element.getBoundingClientRect();
    const client = { x: (e.touches[0].clientX + e.touches[1].clientX) / 2, y: (e.touches[0].clientY + e.touches[1].clientY) / 2 };
    const content = { x: element.scrollLeft + client.x - box.left, y: element.scrollTop + client.y - box.top };
    setPinch({ distance: spread(e.touches), from: zoom, to: zoom, content, client });
  };
  const touchMove = (e: TouchEvent<HTMLDivElement>) => {
    if (!pinch || e.touches.length < 2) return;
    const to = clampZoom((pinch.from * spread(e.touches)) / pinch.distance);
    if (to !== pinch.to) setPinch({ ...pinch, to });
  };
  const touchEnd = (e: TouchEvent<HTMLDivElement>) => {
    if (!pinch || e.touches.length >= 2) return;
    setPinch(null);
    if (pinch.to === pinch.from) return;
    anchor.current = pinch;
    setZoom(pinch.to);
  };
  const shownZoom = pinch?.to ?? zoom;

  const pages = pdf ? Math.min(pdf.doc.numPages, MAX_PAGES) : 0;
  return (
    <>
      {error && <Problem>This PDF could not be read ({error}). It may be damaged or cut short; download it to try another app.</Problem>}
      {pdf && (
        <div className="zoom-bar" role="group" aria-label="Zoom">
          <span className="page-count">
            {pdf.doc.numPages} {pdf.doc.numPages === 1 ? 'page' : 'pages'}
          </span>
          <button type="button" onClick={() => setZoom((z) => clampZoom(z / 1.25))} disabled={zoom <= MIN_ZOOM} aria-label="Zoom out">−</button>
          <output aria-live="polite" aria-label="Zoom level">{Math.round(shownZoom * 100)}%</output>
          <button type="button" onClick={() => setZoom((z) => clampZoom(z * 1.25))} disabled={zoom >= MAX_ZOOM} aria-label="Zoom in">+</button>
          <button type="button" onClick={() => setZoom(1)} disabled={zoom === 1}>Fit width</button>
        </div>
      )}
      <div
        className="pdf-pages"
        ref={holder}
        aria-label={`Pages of ${name}`}
        role="region"
        tabIndex={0}
        onTouchStart={touchStart}
        onTouchMove={touchMove}
        onTouchEnd={touchEnd}
        onTouchCancel={touchEnd}
      >
        {!pdf && !error && <p className="empty">Opening the PDF…</p>}
        <div
          className="pdf-zoom"
          style={pinch ? { transform: `scale(${pinch.to / pinch.from})`, transformOrigin: `${pinch.content.x}px ${pinch.content.y}px` } : undefined}
        >
          {pdf && width > 0 && Array.from({ length: pages }, (_, i) => <PdfPage key={i} pdf={pdf} number={i + 1} width={(width - 2) * zoom} />)}
        </div>
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
  // Height over width, known once the page is read (A4's until then): a zoom lays the page out at
  // once, before it is drawn again.
  const [aspect, setAspect] = useState(1.414);
  const height = width * aspect;
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
      setAspect(viewport.height / viewport.width);
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
