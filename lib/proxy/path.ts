// Which request paths the proxy forwards, and how they map onto the one configured upstream.
// The proxy must never become an open proxy: the upstream host is fixed by configuration, and a
// path may only name something under /v1 or /files on that host. A path that could mean anything
// else to the upstream, or to any server between us and it, is refused rather than "cleaned":
// normalising would only guess at how the upstream resolves it.

// RFC 3986 pchar, minus nothing: unreserved, sub-delims, ':' '@', and percent-escapes.
const SEGMENT_CHARS = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})*$/;
// After decoding, a segment must still be a plain name: no separators (an encoded '/' or '\' is
// read as a separator by some servers) and no control characters.
const UNSAFE_DECODED = /[/\\\x00-\x1f\x7f]/;

export type ProxiedPath = '/v1' | '/files';

/** The area a safe path belongs to, or null when the path must not be forwarded. */
export function classifyPath(path: string): ProxiedPath | null {
  // Origin-form only: an absolute-form target (http://host/...) or a scheme-relative one
  // (//host/...) could name another host.
  if (!path.startsWith('/') || path.startsWith('//')) return null;
  const segments = path.slice(1).split('/');
  const area = segments[0] === 'v1' ? '/v1' : segments[0] === 'files' && segments.length > 1 ? '/files' : null;
  if (!area) return null;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    // An empty segment ('//') only as the very last one: a trailing slash.
    if (segment === '' && i !== segments.length - 1) return null;
    if (!segmentIsSafe(segment)) return null;
  }
  if (area === '/files' && segments[1] === '') return null;
  return area;
}

function segmentIsSafe(segment: string): boolean {
  if (!SEGMENT_CHARS.test(segment)) return false;
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    return false;
  }
  // '.' and '..' raw or percent-encoded (%2e%2e, .%2E, ...) are dot-segments to a resolver.
  return decoded !== '.' && decoded !== '..' && !UNSAFE_DECODED.test(decoded);
}
