// A Server-Sent Events reader for tests: opens the stream with fetch (headers allowed, unlike
// EventSource) and hands out parsed messages as they arrive.
export interface SseMessage {
  id: string | null;
  event: string | null;
  data: string;
  /** Comment lines (heartbeats) seen before this message. */
  comments: string[];
}

export interface SseConnection {
  status: number;
  headers: Headers;
  /** The next message matching `accept` (comments included in what it reports). */
  next(accept?: (m: SseMessage) => boolean): Promise<SseMessage>;
  /** Resolves when a comment line with this text arrives. */
  comment(text: string): Promise<void>;
  /** Resolves when the server ends the stream. */
  ended(): Promise<void>;
  /** Everything the server sent, once it has ended (for a refusal: its JSON body). */
  text(): Promise<string>;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string>): Promise<SseConnection> {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let all = '';
  const queue: SseMessage[] = [];
  const comments: string[] = [];
  let done = false;
  let current: SseMessage = { id: null, event: null, data: '', comments: [] };
  let dataLines: string[] = [];

  const pump = async (): Promise<boolean> => {
    if (done) return false;
    const chunk = await reader.read().catch(() => ({ done: true, value: undefined }));
    if (chunk.done) {
      done = true;
      return false;
    }
    const text = decoder.decode(chunk.value, { stream: true });
    buffer += text;
    all += text;
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (line === '') {
        if (dataLines.length > 0 || current.event !== null || current.id !== null) {
          queue.push({ ...current, data: dataLines.join('\n'), comments: [...current.comments] });
        }
        current = { id: null, event: null, data: '', comments: [] };
        dataLines = [];
      } else if (line.startsWith(':')) {
        const text = line.slice(1).trim();
        comments.push(text);
        current.comments.push(text);
      } else {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') dataLines.push(value);
        else if (field === 'id') current.id = value;
        else if (field === 'event') current.event = value;
      }
    }
    return true;
  };

  return {
    status: response.status,
    headers: response.headers,
    async next(accept = () => true) {
      for (;;) {
        const index = queue.findIndex(accept);
        if (index >= 0) return queue.splice(index, 1)[0]!;
        if (!(await pump())) throw new Error('the stream ended before the expected message');
      }
    },
    async comment(text) {
      for (let seen = 0; ; ) {
        while (seen < comments.length) if (comments[seen++] === text) return;
        if (!(await pump())) throw new Error(`the stream ended before a "${text}" comment`);
      }
    },
    async ended() {
      while (await pump());
    },
    async text() {
      while (await pump());
      return all;
    },
    close() {
      abort.abort();
    },
  };
}
