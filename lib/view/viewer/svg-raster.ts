// An SVG is shown as pixels: drawn by the browser in a sandboxed frame of an opaque origin
// (lib/view/viewer/svg-frame-script.ts), handed back as PNG bytes, and shown from a blob typed
// image/png (lib/view/viewer/safe-object-url.ts). No URL of the app's origin ever carries the
// SVG: opened as a page, its script would run with the app's origin (issue 27).
import { SVG_FRAME_SCRIPT } from './svg-frame-script';

export type Rasterised = { png: Uint8Array; width: number; height: number };

/** Drawn at up to this many times its size (zooming in stays sharp to there)... */
const SCALE = 4;
/** ...and at most this many pixels a side. */
const MAX_SIDE = 4096;
/** A frame that never answers (its script refused, say) fails the view rather than leaving it "Opening…". */
const NO_ANSWER_MS = 20_000;

/** True when the bytes start like markup (after a byte-order mark and blank space): what an SVG does. */
export function looksLikeMarkup(head: Uint8Array): boolean {
  let i = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  while (i < head.length && (head[i] === 0x20 || head[i] === 0x0a || head[i] === 0x0d || head[i] === 0x09)) i++;
  return head[i] === 0x3c; // '<'
}

let nextId = 0;

export function rasteriseSvg(bytes: Uint8Array, { scale = SCALE, max = MAX_SIDE }: { scale?: number; max?: number } = {}): Promise<Rasterised> {
  return new Promise((resolve, reject) => {
    const id = ++nextId;
    const frame = document.createElement('iframe');
    // allow-scripts only: an opaque origin, no forms, no popups, no top navigation.
    frame.setAttribute('sandbox', 'allow-scripts');
    frame.setAttribute('aria-hidden', 'true');
    frame.tabIndex = -1;
    frame.title = 'SVG renderer';
    frame.style.display = 'none';
    frame.srcdoc = `<!doctype html><meta charset="utf-8"><script>${SVG_FRAME_SCRIPT}</script>`;
    const done = () => {
      removeEventListener('message', answer);
      clearTimeout(timer);
      frame.remove();
    };
    const answer = (event: MessageEvent<{ id?: number; png?: ArrayBuffer; width?: number; height?: number; error?: string }>) => {
      if (event.source !== frame.contentWindow || event.data?.id !== id) return;
      done();
      const { png, width, height, error } = event.data;
      if (png && width && height) resolve({ png: new Uint8Array(png), width, height });
      else reject(new Error(error ?? 'the SVG could not be drawn'));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error('the SVG could not be drawn'));
    }, NO_ANSWER_MS);
    addEventListener('message', answer);
    frame.addEventListener('load', () => frame.contentWindow?.postMessage({ id, bytes: bytes.slice().buffer, scale, max }, '*'), { once: true });
    document.body.append(frame);
  });
}
