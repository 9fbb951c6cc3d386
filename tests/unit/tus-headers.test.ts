// The tus headers' parsing (lib/api/http/tus/headers.ts): the schemas the route table documents
// read the request, and what fails them is the contract's error with the header as its param.
import { describe, expect, it } from 'vitest';
import type { ApiRequest } from '../../lib/api/http/exchange';
import { AppendHeaders, checkVersion, contentLength, CreationHeaders, methodOverride, readHeaders } from '../../lib/api/http/tus/headers';

const request = (headers: Record<string, string>, method = 'POST') => ({ method, header: (name: string) => headers[name] ?? null }) as unknown as ApiRequest;
const b64 = (value: string) => Buffer.from(value, 'utf8').toString('base64');
function failure(work: () => unknown): [string, string | undefined] | null {
  try {
    work();
    return null;
  } catch (error) {
    const e = error as { code: string; param?: string };
    return [e.code, e.param];
  }
}

describe('tus headers', () => {
  it.each([
    [{ 'upload-length': '3' }, null],
    [{ 'upload-length': ' 3 ' }, null],
    [{}, ['parameter_missing', 'Upload-Length']],
    [{ 'upload-length': '' }, ['parameter_invalid', 'Upload-Length']],
    [{ 'upload-length': '-1' }, ['parameter_invalid', 'Upload-Length']],
    [{ 'upload-length': '+1' }, ['parameter_invalid', 'Upload-Length']],
    [{ 'upload-length': '1.5' }, ['parameter_invalid', 'Upload-Length']],
    [{ 'upload-length': '9007199254740993' }, ['parameter_invalid', 'Upload-Length']],
    [{ 'upload-length': '00000000000000001' }, ['parameter_invalid', 'Upload-Length']],
    [{ 'upload-length': '3', 'upload-metadata': 'a b c' }, ['parameter_invalid', 'Upload-Metadata']],
    [{ 'upload-length': '3', 'upload-metadata': `a ${b64('x')},a ${b64('y')}` }, ['parameter_invalid', 'Upload-Metadata']],
    [{ 'upload-length': '3', 'upload-metadata': 'a !!!!' }, ['parameter_invalid', 'Upload-Metadata']],
    [{ 'upload-length': '3', 'upload-metadata': `a ${Buffer.from([0xc3]).toString('base64')}` }, ['parameter_invalid', 'Upload-Metadata']],
  ] as const)('creation %j → %j', (headers, expected) => {
    expect(failure(() => readHeaders(CreationHeaders, request(headers)))).toEqual(expected);
  });

  it('reads what it parses: numbers, metadata decoded (a BOM kept), the preference', () => {
    const parsed = readHeaders(CreationHeaders, request({ 'upload-length': '10', 'upload-metadata': `filename ${b64('\uFEFFa.pdf')},empty,x ${b64('é')}`, prefer: 'respond-async, return=representation' }));
    expect(parsed['Upload-Length']).toBe(10);
    expect([...parsed['Upload-Metadata']]).toEqual([['filename', '\uFEFFa.pdf'], ['empty', ''], ['x', 'é']]);
    expect(parsed.Prefer).toBe(true);
    expect(readHeaders(CreationHeaders, request({ 'upload-length': '0' }))['Upload-Metadata'].size).toBe(0);
    expect(readHeaders(AppendHeaders, request({ 'upload-offset': '7', prefer: 'return=minimal' }))).toEqual({ 'Upload-Offset': 7, Prefer: false });
    expect(failure(() => readHeaders(AppendHeaders, request({})))).toEqual(['parameter_missing', 'Upload-Offset']);
  });

  it('Tus-Resumable other than 1.0.0 is 412; Content-Length and X-HTTP-Method-Override', () => {
    expect(failure(() => checkVersion(request({ 'tus-resumable': ' 1.0.0' })))).toBeNull();
    expect(failure(() => checkVersion(request({})))).toBeNull();
    expect(failure(() => checkVersion(request({ 'tus-resumable': '0.2.2' })))).toEqual(['tus_version_unsupported', 'Tus-Resumable']);
    expect(contentLength(request({}))).toBeNull();
    expect(contentLength(request({ 'content-length': '12' }))).toBe(12);
    expect(failure(() => contentLength(request({ 'content-length': 'x' })))).toEqual(['parameter_invalid', 'Content-Length']);
    expect(methodOverride(request({ 'x-http-method-override': ' patch ' }))).toBe('PATCH');
    expect(methodOverride(request({ 'x-http-method-override': '' }))).toBeNull();
    expect(methodOverride(request({ 'x-http-method-override': 'DELETE' }, 'GET'))).toBeNull();
  });
});
