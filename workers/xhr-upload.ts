// Uploads through XMLHttpRequest, which (unlike fetch) reports how many bytes have been sent.
// Available in dedicated workers; handed to the engine as its `upload` dependency, so lib/sync
// stays free of browser APIs. Answers with a Response, as fetch would.
import type { UploadLike } from '../lib/sync/worker';

export const xhrUpload: UploadLike = (input, init, onProgress) =>
  new Promise<Response>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(init.method ?? 'POST', input);
    xhr.responseType = 'arraybuffer';
    for (const [name, value] of Object.entries((init.headers ?? {}) as Record<string, string>)) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (event) => onProgress(event.loaded, event.lengthComputable ? event.total : 0);
    xhr.onload = () => {
      const headers = new Headers();
      for (const line of xhr.getAllResponseHeaders().trim().split(/[\r\n]+/)) {
        const at = line.indexOf(':');
        if (at > 0) headers.append(line.slice(0, at).trim(), line.slice(at + 1).trim());
      }
      const empty = xhr.status === 204 || xhr.status === 304;
      resolve(new Response(empty ? null : (xhr.response as ArrayBuffer), { status: xhr.status, statusText: xhr.statusText, headers }));
    };
    // Same errors as fetch: a TypeError when no answer came, the signal's reason when aborted.
    xhr.onerror = () => reject(new TypeError('upload failed (network error)'));
    const signal = init.signal;
    xhr.onabort = () => reject(signal?.reason ?? new DOMException('upload aborted', 'AbortError'));
    if (signal?.aborted) return xhr.abort();
    signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(init.body as XMLHttpRequestBodyInit);
  });
