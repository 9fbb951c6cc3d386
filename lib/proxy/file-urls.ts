// file_url rewriting. The upstream builds file_url on its own asset origin; the browser may not be
// able to reach that (see docs/proxy.md), so URLs under the upstream's /files/ are rewritten onto
// the app's origin, where the proxy forwards /files/* back to the upstream. URLs on any other host
// (an upstream with a separate ASSET_URL, a CDN) were made browser-facing on purpose: left alone.
import { Transform } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { fieldOf } from '../records';

export class FileUrlRewriter {
  private readonly origin: string;
  /** The upstream's /files/ prefix as a path, e.g. /files/ or /base/files/. */
  private readonly filesPath: string;

  constructor(upstreamBaseUrl: string) {
    const base = new URL(upstreamBaseUrl);
    this.origin = base.origin;
    this.filesPath = `${base.pathname.replace(/\/+$/, '')}/files/`;
  }

  /** One URL: onto `assetBase` when it names the upstream's /files/, else unchanged. */
  rewrite(fileUrl: string, assetBase: string): string {
    let url: URL;
    try {
      url = new URL(fileUrl);
    } catch {
      return fileUrl;
    }
    if (url.origin !== this.origin || !url.pathname.startsWith(this.filesPath)) return fileUrl;
    return `${assetBase}/files/${url.pathname.slice(this.filesPath.length)}${url.search}`;
  }

  /**
   * A JSON body from /v1/files or /v1/events: a File, a page of Files, a change event or a page
   * of them (the file is the event's `object`), or an error (no file_url). Returns the new text,
   * or null when nothing changed (the original bytes are then passed on untouched).
   */
  rewriteBody(text: string, assetBase: string): string | null {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return null;
    }
    let changed = false;
    const visit = (item: unknown) => {
      if (!item || typeof item !== 'object') return;
      if (!('file_url' in item) || typeof item.file_url !== 'string') return visit('object' in item ? item.object : undefined);
      const next = this.rewrite(item.file_url, assetBase);
      if (next !== item.file_url) {
        item.file_url = next;
        changed = true;
      }
    };
    visit(body);
    const data = fieldOf(body, 'data');
    if (Array.isArray(data)) data.forEach(visit);
    return changed ? JSON.stringify(body) : null;
  }

  /** The live stream (text/event-stream): each `data:` line rewritten as above, line by line. */
  eventStreamRewriter(assetBase: string): Transform {
    let partial = '';
    const decoder = new StringDecoder('utf8'); // a character may straddle two chunks
    const rewriteLine = (line: string) =>
      line.startsWith('data:') ? `data: ${this.rewriteBody(line.slice(5).trimStart(), assetBase) ?? line.slice(5).trimStart()}` : line;
    return new Transform({
      transform(chunk: Buffer, _encoding, done) {
        const lines = (partial + decoder.write(chunk)).split('\n');
        partial = lines.pop()!;
        done(null, lines.length ? lines.map(rewriteLine).join('\n') + '\n' : '');
      },
      flush(done) {
        const rest = partial + decoder.end();
        done(null, rest ? rewriteLine(rest) : '');
      },
    });
  }
}
