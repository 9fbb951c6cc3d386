// Makes a small thumbnail of a PDF's first page, off the page's thread: pdf.js parses in its own
// worker (started from this one), the page is drawn on an OffscreenCanvas here, scaled to fit
// `size` px, encoded as WebP. A worker of its own, apart from the image thumbnails' one, so pdf.js
// loads only when a PDF thumbnail is made. Load it with:
// new Worker(new URL('../workers/pdf-thumbnail.worker.ts', import.meta.url), { type: 'module' })
//
// pdf.js without a document: canvases (its scratch ones too) are OffscreenCanvas; fonts are drawn
// as paths (disableFontFace: no FontFace, which needs a document here); filters that need SVG are
// left out (a thumbnail does without them). As in the viewer: no eval, no XFA, no scripting.
// A PDF it cannot read answers an error: the list keeps the icon.
import { getDocument, GlobalWorkerOptions } from 'pdfjs-dist';
import { oneAtATime } from '../lib/view/viewer/one-at-a-time';

const scope = globalThis as unknown as DedicatedWorkerGlobalScope;

GlobalWorkerOptions.workerPort = new Worker(new URL('pdfjs-dist/build/pdf.worker.min.mjs', import.meta.url), { type: 'module' });

type CanvasAndContext = { canvas: OffscreenCanvas | null; context: OffscreenCanvasRenderingContext2D | null };

class OffscreenCanvasFactory {
  constructor(_options: unknown) {}
  create(width: number, height: number): CanvasAndContext {
    if (width <= 0 || height <= 0) throw new Error('Invalid canvas size');
    const canvas = new OffscreenCanvas(width, height);
    return { canvas, context: canvas.getContext('2d', { willReadFrequently: true }) };
  }
  reset(canvasAndContext: CanvasAndContext, width: number, height: number) {
    if (!canvasAndContext.canvas) throw new Error('Canvas is not specified');
    canvasAndContext.canvas.width = width;
    canvasAndContext.canvas.height = height;
  }
  destroy(canvasAndContext: CanvasAndContext) {
    if (canvasAndContext.canvas) canvasAndContext.canvas.width = canvasAndContext.canvas.height = 0;
    canvasAndContext.canvas = null;
    canvasAndContext.context = null;
  }
}

class NoFilterFactory {
  constructor(_options: unknown) {}
  addFilter() {
    return 'none';
  }
  addHCMFilter() {
    return 'none';
  }
  addAlphaFilter() {
    return 'none';
  }
  addLuminosityFilter() {
    return 'none';
  }
  addHighlightHCMFilter() {
    return 'none';
  }
  destroy() {}
}

// One document at a time, the last one destroyed before the next starts (one-at-a-time.ts says why).
scope.onmessage = oneAtATime(async (event: MessageEvent<{ id: number; blob: Blob; size: number; quality?: number }>) => {
  const { id, blob, size, quality = 0.75 } = event.data;
  let task: ReturnType<typeof getDocument> | null = null;
  try {
    task = getDocument({
      data: new Uint8Array(await blob.arrayBuffer()),
      isEvalSupported: false,
      enableXfa: false,
      disableFontFace: true,
      CanvasFactory: OffscreenCanvasFactory,
      FilterFactory: NoFilterFactory,
    } as Parameters<typeof getDocument>[0]);
    const doc = await task.promise;
    const page = await doc.getPage(1);
    const unit = page.getViewport({ scale: 1 });
    const viewport = page.getViewport({ scale: size / Math.max(unit.width, unit.height) });
    const width = Math.max(1, Math.round(viewport.width));
    const height = Math.max(1, Math.round(viewport.height));
    const canvas = new OffscreenCanvas(width, height);
    await page.render({ canvas: canvas as unknown as HTMLCanvasElement, viewport }).promise;
    const out = await canvas.convertToBlob({ type: 'image/webp', quality });
    const bytes = await out.arrayBuffer();
    scope.postMessage({ id, bytes, type: out.type }, [bytes]);
  } catch (error) {
    scope.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  } finally {
    await task?.destroy().catch(() => {});
  }
});

export {};
