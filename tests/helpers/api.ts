import { expect } from 'vitest';
import { ApiErrorBody } from '../../lib/schemas';
// A tiny HTTP client for tests: every call goes over the network to a real server.
export interface CallResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface CallOptions {
  token?: string | null;
  json?: unknown;
  form?: Record<string, string>;
  multipart?: FormData;
  body?: BodyInit;
  headers?: Record<string, string>;
}

export function client(baseUrl: () => string, defaultToken?: string) {
  async function call<T = any>(method: string, path: string, options: CallOptions = {}): Promise<CallResult<T>> {
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token === undefined ? defaultToken : options.token;
    if (token) headers.authorization = `Bearer ${token}`;
    let body: BodyInit | undefined = options.body;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(options.form).toString();
    } else if (options.multipart) {
      body = options.multipart;
    }
    const response = await fetch(baseUrl() + path, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = undefined;
    if (text && (response.headers.get('content-type') ?? '').includes('json')) parsed = JSON.parse(text);
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }
  return {
    call,
    get: <T = any>(path: string, o?: CallOptions) => call<T>('GET', path, o),
    post: <T = any>(path: string, o?: CallOptions) => call<T>('POST', path, o),
    put: <T = any>(path: string, o?: CallOptions) => call<T>('PUT', path, o),
    del: <T = any>(path: string, o?: CallOptions) => call<T>('DELETE', path, o),
    upload(fields: Record<string, string>, file: { name: string; bytes: Uint8Array | string; type?: string } | null, o: CallOptions = {}) {
      const form = new FormData();
      for (const [k, v] of Object.entries(fields)) form.append(k, v);
      if (file) form.append('file', new Blob([file.bytes as BlobPart], file.type ? { type: file.type } : {}), file.name);
      return call('POST', '/v1/files', { ...o, multipart: form });
    },
  };
}

/** The contract's error: status, shape, code and (when given) the param. */
export function expectError(r: { status: number; body: any }, status: number, code: string, param?: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  ApiErrorBody.parse(r.body);
  expect(r.body.code).toBe(code);
  expect(r.body.type).toBe(status >= 500 ? 'api_error' : 'invalid_request');
  if (param !== undefined) expect(r.body.param).toBe(param);
}
