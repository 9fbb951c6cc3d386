// Makes a small thumbnail of an image, off the page's thread: decoded with its EXIF orientation,
// scaled to fit `size` px, encoded as WebP. Load it with:
// new Worker(new URL('../workers/thumbnail.worker.ts', import.meta.url), { type: 'module' })
// A format this worker cannot decode (SVG, HEIC here) answers an error: the list keeps the icon.

const scope = globalThis as unknown as DedicatedWorkerGlobalScope;

scope.onmessage = async (event: MessageEvent<{ id: number; blob: Blob; size: number; quality?: number }>) => {
  const { id, blob, size, quality = 0.75 } = event.data;
  try {
    const bitmap = await createImageBitmap(blob, { imageOrientation: 'from-image' });
    const scale = Math.min(1, size / Math.max(bitmap.width, bitmap.height));
    const width = Math.max(1, Math.round(bitmap.width * scale));
    const height = Math.max(1, Math.round(bitmap.height * scale));
    const canvas = new OffscreenCanvas(width, height);
    canvas.getContext('2d')!.drawImage(bitmap, 0, 0, width, height);
    bitmap.close();
    const out = await canvas.convertToBlob({ type: 'image/webp', quality });
    const bytes = await out.arrayBuffer();
    scope.postMessage({ id, bytes, type: out.type }, [bytes]);
  } catch (error) {
    scope.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
};

export {};
