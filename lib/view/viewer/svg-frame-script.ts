// The script of the frame that turns an SVG into pixels (lib/view/viewer/svg-raster.ts), as text:
// the frame is a srcdoc document, sandboxed without allow-same-origin, so its origin is opaque
// ("null") and nothing in it can reach the app's storage, cookies or API. The app's CSP allows
// this exact script by its hash (lib/security.ts), and no other inline script.
//
// In the frame: the SVG's bytes become a blob typed image/svg+xml — in the opaque origin only,
// never in the DOM, revoked as soon as it is decoded — drawn by an <img> (an SVG image runs no
// script and loads nothing) onto a canvas at `scale` times its size, at most `max` px a side, and
// sent back as PNG bytes with the SVG's own size. A file that is not an SVG answers an error.

export const SVG_FRAME_SCRIPT = `"use strict";
addEventListener("message", async (event) => {
  if (event.source !== parent) return;
  const { id, bytes, scale, max } = event.data || {};
  let url = null;
  try {
    url = URL.createObjectURL(new Blob([bytes], { type: "image/svg+xml" }));
    const img = new Image();
    img.src = url;
    await img.decode();
    const width = img.naturalWidth, height = img.naturalHeight;
    if (!(width > 0 && height > 0)) throw new Error("the image has no size");
    const factor = Math.min(scale, max / Math.max(width, height));
    const canvas = new OffscreenCanvas(Math.max(1, Math.round(width * factor)), Math.max(1, Math.round(height * factor)));
    canvas.getContext("2d").drawImage(img, 0, 0, canvas.width, canvas.height);
    const png = await (await canvas.convertToBlob({ type: "image/png" })).arrayBuffer();
    parent.postMessage({ id, png, width, height }, "*", [png]);
  } catch (error) {
    parent.postMessage({ id, error: String((error && error.message) || error) }, "*");
  } finally {
    if (url) URL.revokeObjectURL(url);
  }
});
`;
