'use client';
// An image fitted to the screen; pinch (two pointers) or double-tap to zoom, drag to move when
// zoomed, and buttons for the same. The <img> shows a blob of the file's bytes: an SVG shown this
// way is inert (no script, no external loads). EXIF orientation: `image-orientation: from-image`.
import { useRef, useState, type PointerEvent } from 'react';
import { useObjectUrl } from './useObjectUrl';

const MIN = 1;
const MAX = 8;
const clamp = (v: number) => Math.min(MAX, Math.max(MIN, v));

/** The blob's type: the declared one when it is an image type, else one from the extension. */
function imageType(type: string, name: string): string {
  if (type.startsWith('image/')) return type;
  const ext = name.split('.').pop()?.toLowerCase() ?? '';
  return ext === 'svg' ? 'image/svg+xml' : ext === 'jpg' ? 'image/jpeg' : `image/${ext || 'png'}`;
}

export function ImageView({ bytes, type, name, onUnreadable, onShown }: { bytes: Uint8Array; type: string; name: string; onUnreadable(): void; onShown(): void }) {
  const url = useObjectUrl(bytes, imageType(type, name));
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
        {url && (
          <img
            src={url}
            alt={name}
            draggable={false}
            onError={onUnreadable}
            onLoad={onShown}
            style={{ transform: `translate(${view.x}px, ${view.y}px) scale(${view.scale})` }}
          />
        )}
      </div>
    </>
  );
}
