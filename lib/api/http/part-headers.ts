// The raw headers of each multipart part, as busboy itself parsed them.
//
// Why: busboy's 'file' event reports `mimeType: 'text/plain'` both for a part that declares
// `Content-Type: text/plain` and for one with no Content-Type header at all (RFC 7578's default,
// busboy 1.6 lib/types/multipart.js sets partType = 'text/plain' before looking), and for one whose
// header does not parse. The contract needs the difference: a part with no Content-Type declares
// nothing and its type is sniffed (API.md, "Files and the asset host").
//
// Why this way: busboy keeps the parsed header object in its HeaderParser and hands it to a
// callback that emits 'file' synchronously, so wrapping that callback tells the 'file' listener the
// exact headers busboy used for that same part — no second parser that could disagree with it on
// odd input, no correlating parts by order. The alternatives were worse: no maintained fork exposes
// part headers (@fastify/busboy has the same default), parsers that do (@remix-run/multipart-parser)
// buffer each part in memory, which uploads of hundreds of MiB cannot afford, and a parser of our
// own in front of busboy would be a second multipart implementation to keep in step.
// The price is a dependence on busboy's internals (`_hparser`, its `cb`), pinned by the lockfile;
// if they change, `observePartHeaders` throws at the first upload instead of guessing, and the
// upload tests (no-Content-Type part sniffed, declared text/plain kept) fail.
import type busboy from 'busboy';
import { fieldOf, isRecord } from '../../records';

export type PartHeaders = Readonly<Record<string, readonly string[]>>;

/**
 * Hooks `parser` so that, inside a 'file' listener, `current()` returns the headers of the part
 * being reported: lowercase names, each with its values in order. (Not for 'field': busboy emits
 * that at the part's end, when the next part's header may already be under way.)
 */
export function observePartHeaders(parser: busboy.Busboy): { current(): PartHeaders } {
  if (!Object.hasOwn(parser, '_hparser') || fieldOf(parser, '_hparser') !== null) {
    throw new Error('busboy internals changed: cannot observe multipart part headers (see lib/api/http/part-headers.ts)');
  }
  let last: PartHeaders | null = null;
  let hparser: unknown = null;
  const wrapped = new WeakSet<object>();
  // busboy sets `_hparser` to its one HeaderParser at each part's start and to null once the
  // header is parsed; the setter wraps that parser's callback the first time it sees it.
  Object.defineProperty(parser, '_hparser', {
    configurable: true,
    enumerable: true,
    get: () => hparser,
    set(value: unknown) {
      hparser = value;
      if (!isRecord(value)) return;
      last = null; // a new part's header begins: what came before belongs to the previous part
      if (wrapped.has(value)) return;
      const original = value.cb;
      if (typeof original !== 'function') {
        throw new Error('busboy internals changed: its header parser has no callback (see lib/api/http/part-headers.ts)');
      }
      value.cb = (header: PartHeaders) => {
        last = header;
        original(header);
      };
      wrapped.add(value);
    },
  });
  return {
    current() {
      if (last === null) throw new Error('busboy reported a part before its headers were observed (see lib/api/http/part-headers.ts)');
      return last;
    },
  };
}

/** The part's declared Content-Type, exactly as sent; undefined when it sent no such header. */
export function declaredContentType(headers: PartHeaders): string | undefined {
  return headers['content-type']?.[0];
}
