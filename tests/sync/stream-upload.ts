// An upload transport for the engine in Node (its `upload` dependency; the worker's is
// XMLHttpRequest, workers/xhr-upload.ts): the multipart body sent as a stream through the given
// fetch, reporting bytes as the connection takes them, so the engine can tell a moving transfer
// from a stalled one. `delayMs` before each `chunkBytes`: a slow uplink.
import type { FetchLike, UploadLike } from '../../lib/sync/core/http';

export function streamUpload(fetch: () => FetchLike, link: { chunkBytes?: number; delayMs?: number } = {}): UploadLike {
  return async (input, init, onProgress) => {
    // The form encoded as fetch would send it (its boundary in the Content-Type).
    const encoded = new Request('http://form.invalid/', { method: 'POST', body: init.body as FormData });
    const bytes = new Uint8Array(await encoded.arrayBuffer());
    const chunkBytes = link.chunkBytes ?? 64 * 1024;
    let sent = 0;
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          if (sent >= bytes.length) return controller.close();
          if (link.delayMs) await new Promise((resolve) => setTimeout(resolve, link.delayMs));
          const piece = bytes.slice(sent, Math.min(bytes.length, sent + chunkBytes));
          sent += piece.length;
          controller.enqueue(piece);
          onProgress(sent, bytes.length);
        },
      },
      { highWaterMark: 0 }, // read only as the connection takes it
    );
    const headers = { ...(init.headers as Record<string, string>), 'Content-Type': encoded.headers.get('content-type')! };
    return fetch()(input, { ...init, headers, body, duplex: 'half' } as RequestInit);
  };
}
