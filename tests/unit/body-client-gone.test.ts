// @vitest-environment node
// A request body read after its client has gone (the request waited its turn in the fair share,
// lib/api/http/fair-share.ts, and the client closed the connection meanwhile): the read must
// settle. It used to wait for ever, holding that user's slot, so after four such requests every
// later request of the user hung (`npm run bench api`: 0 req/s after its PUT run, 2026-11-28).
import http from 'node:http';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { readFields } from '../../lib/api/http/body';
import { fromNodeRequest } from '../../lib/api/http/node-adapter';

const JSON_BODY = { type: 'application/json', body: '{"is_pinned":true}' };
const MULTIPART_BODY = { type: 'multipart/form-data; boundary=b', body: '--b\r\nContent-Disposition: form-data; name="filename"\r\n\r\nscan.pdf\r\n--b--\r\n' };

describe('a body read once its client has gone', () => {
  it.each([
    ['JSON', JSON_BODY],
    ['multipart', MULTIPART_BODY],
  ])('%s: is refused instead of waiting for ever', async (_kind, { type, body }) => {
    let outcome!: Promise<unknown>;
    const read = new Promise<void>((done) => {
      const server = http.createServer((req) => {
        // Not read until the connection is gone, as a request waiting its turn.
        req.once('close', () => {
          outcome = readFields(fromNodeRequest(req)).then(
            (fields) => ({ fields }),
            (error: Error) => ({ refused: error.message }),
          );
          void outcome.finally(() => server.close(() => done()));
        });
      });
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo;
        const socket = net.connect(port, '127.0.0.1', () => {
          socket.end(`PUT /v1/conversations/x HTTP/1.1\r\nHost: a\r\nContent-Type: ${type}\r\nContent-Length: ${body.length}\r\n\r\n${body}`, () => socket.destroy());
        });
      });
    });
    await read;
    expect(await outcome).toEqual({ refused: 'The request body could not be read' });
  }, 10_000);
});
