'use client';
// An image fitted to the screen; pinch (two pointers) or double-tap to zoom, drag to move when
// zoomed, and buttons for the same. EXIF orientation: `image-orientation: from-image`.
// A raster image is shown from a blob of its bytes typed by their signature (safe-object-url.ts).
// An SVG is never put in a URL of the app's origin (opened as a page, its script would run here):
// it is drawn in a sandboxed frame of an opaque origin and shown as the PNG that comes back, at
// its own size, drawn at up to 4× for zooming (lib/view/viewer/svg-raster.ts).
import { useEffect, useRef, useState, type PointerEvent } from 'react';
import { sniffRaster } from '@/lib/view/viewer/safe-object-url';
import { looksLikeMarkup, rasteriseSvg } from '@/lib/view/viewer/svg-raster';
import { useObjectUrl } from '../useObjectUrl';

const MIN = 1;
const MAX = 8;
const clamp = (v: number) => Math.min(MAX, Math.max(MIN, v));

/** What the <img> shows: the file's bytes, or the PNG of an SVG with the SVG's size. */
type Shown = { bytes: Uint8Array; width?: number; height?: number };

/**
 * `onShown`: the image is on screen; with the bytes shown (the PNG, for an SVG), which a thumbnail
 * can be made from.
 */
export function ImageView({ bytes, name, onUnreadable, onShown }: { bytes: Uint8Array; name: string; onUnreadable(): void; onShown(shown: Uint8Array): void }) {
  const [shown, setShown] = useState<Shown | null>(null);
  const unreadable = useRef(onUnreadable);
  unreadable.current = onUnreadable;
  useEffect(() => {
    const head = bytes.subarray(0, 64);
    // A raster image (or one of a format this browser may still decode): its own bytes.
    if (sniffRaster(head) || !looksLikeMarkup(head)) {
      setShown({ bytes });
      return;
    }
    let live = true;
    setShown(null);
    rasteriseSvg(bytes).then(
      (r) => live && setShown({ bytes: r.png, width: r.width, height: r.height }),
      () => live && unreadable.current(),
    );
    return () => {
      live = false;
    };
  }, [bytes]);
  const url = useObjectUrl(shown?.bytes ?? null, 'image');
  const [view, setView] = useState({ scale: 1, x: 0, y: 0 });
  const pointers = useRef(new Map<number, { x: number; y: number }>());
  const pinch = useRef<{ distance: number; scale: number } | null>(null);
  const tap = useRef<{ at: number; x: number; y: number; moved: boolean }>({ at: 0, x: 0, y: 0, moved: false });

  const distance = () => {
    const [a, b] = [...pointers.current.values()];
    return a && b ? Math.hypot(a.x - b.x, a.y - b.y) : 0;
  };
  const zoomTo = (scale: number) => setView((v) => (clamp(scale) === 1 ? { scale: 1, x: 0, y: 0 } : { ...v, scale: clamp(scale) }));

  function down(e: PointerEvent<HTMLDivElement>) {
    e.currentTarget.setPointerCapture(e.pointerId);
    pointers.current.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (pointers.current.size === 2) pinch.current = { distance: distance(), scale: view.scale };
    tap.current.moved = pointers.current.size > 1;
  }
  function move(e: PointerEvent<HTMLDivElement>) {
    const last = pointers.current.get(e.pointerId);
    if (!last) return;
    pointers.current.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (Math.hypot(e.clientX - last.x, e.clientY - last.y) > 2) tap.current.moved = true;
    if (pinch.current && pointers.current.size === 2) {
      const scale = clamp((pinch.current.scale * distance()) / pinch.current.distance);
      setView((v) => (scale === 1 ? { scale, x: 0, y: 0 } : { ...v, scale }));
    } else if (pointers.current.size === 1) {
      setView((v) => (v.scale === 1 ? v : { ...v, x: v.x + e.clientX - last.x, y: v.y + e.clientY - last.y }));
    }
  }
  function up(e: PointerEvent<HTMLDivElement>) {
    if (!pointers.current.delete(e.pointerId)) return;
    if (pointers.current.size < 2) pinch.current = null;
    if (pointers.current.size > 0 || tap.current.moved) return;
    // Two taps close together in time and place: zoom in there, or back to fitted.
    const now = e.timeStamp;
    const previous = tap.current;
    if (now - previous.at < 350 && Math.hypot(e.clientX - previous.x, e.clientY - previous.y) < 30) {
      tap.current = { at: 0, x: 0, y: 0, moved: false };
      const box = e.currentTarget.getBoundingClientRect();
      setView((v) => (v.scale > 1 ? { scale: 1, x: 0, y: 0 } : { scale: 2.5, x: (box.left + box.width / 2 - e.clientX) * 1.5, y: (box.top + box.height / 2 - e.clientY) * 1.5 }));
    } else tap.current = { at: now, x: e.clientX, y: e.clientY, moved: false };
  }

  return (
    <>
      <div className="zoom-bar" role="group" aria-label="Zoom">
        <button type="button" onClick={() => zoomTo(view.scale / 1.5)} disabled={view.scale <= MIN} aria-label="Zoom out">−</button>
        <output aria-live="polite" aria-label="Zoom level">{Math.round(view.scale * 100)}%</output>
        <button type="button" onClick={() => zoomTo(view.scale * 1.5)} disabled={view.scale >= MAX} aria-label="Zoom in">+</button>
        <button type="button" onClick={() => zoomTo(1)} disabled={view.scale === 1}>Fit</button>
      </div>
      <div className="image-stage" onPointerDown={down} onPointerMove={move} onPointerUp={up} onPointerCancel={up}>
        {url && shown && (
          <img
            src={url}
            alt={name}
            width={shown.width}
            height={shown.height}
            draggable={false}
            onError={onUnreadable}
            onLoad={() => onShown(shown.bytes)}
            style={{ transform: `translate(${view.x}px, ${view.y}px) scale(${view.scale})` }}
          />
        )}
      </div>
    </>
  );
}
