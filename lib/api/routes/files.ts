// /v1/files and /v1/files/{id}.
import { z } from 'zod';
import { FileListQuery, FileUpdateInput, FileUploadInput, Id, PageQuery } from '../../schemas';
import { bodyKind, readFields, unsupportedMediaType } from '../http/body';
import { receiveUpload } from '../http/upload';
import { refuseQueryParameters } from '../domain/pagination';
import { isCommitOutcomeUnknown } from '../storage/transaction';
import { common, empty, error, notFound, ok, unsupportedMedia, writes } from './responses';
import { deleteOne, fieldsBody, type Api, type Call, type Route } from './route';

const item = { path: '/v1/files/{id}', tag: 'Files', params: z.strictObject({ id: Id }), missing: 'file' } as const;
const none = notFound('no such file (or not the caller\'s)');
const renameBody = fieldsBody(FileUpdateInput, 'FileUpdate', true);

export const fileRoutes: Route[] = [
  {
    method: 'GET',
    path: '/v1/files',
    tag: 'Files',
    operationId: 'listFiles',
    summary: 'List files',
    description: 'A page of the caller\'s files, newest first; with conversation_id, those of that conversation.',
    query: FileListQuery.extend(PageQuery.shape),
    responses: { '200': ok('A page, newest first', 'FilePage'), ...common, ...notFound('conversation_id names no conversation of the caller') },
    handle: async (api, { request, user }) => ({
      status: 200,
      body: await api.files.list(api.db, user, request.query, api.assetBase(request)),
    }),
  },
  {
    method: 'POST',
    path: '/v1/files',
    tag: 'Files',
    operationId: 'uploadFile',
    summary: 'Upload a file',
    description:
      'One file part and exactly one of conversation_id (a new message in it carries the file) or message_id (attached to that message); fields may come before or after the file. Raises the conversation\'s last_active_at.',
    long: true,
    idempotent: true,
    body: { schema: FileUploadInput, media: ['multipart/form-data'], required: true, name: 'FileUpload' },
    responses: {
      '201': ok('Stored', 'File'),
      ...common,
      ...notFound('no such conversation or message (or not the caller\'s)'),
      ...writes,
      '413': error('file_too_large: over MAX_UPLOAD_BYTES; nothing was stored'),
      ...unsupportedMedia('multipart/form-data'),
    },
    handle: async (api, { request, user }) => {
      refuseQueryParameters(request.query); // before any body is read: an upload stores nothing
      return api.written(user, await upload(api, request, user));
    },
  },
  {
    ...item,
    method: 'GET',
    operationId: 'retrieveFile',
    summary: 'Retrieve a file',
    description: 'The file, with a file_url signed for its current name.',
    responses: { '200': ok('The file', 'File'), ...common, ...none },
    handle: async (api, { request, user, params }) => {
      refuseQueryParameters(request.query);
      return { status: 200, body: api.files.toFile(await api.files.get(api.db, user, params.id), api.assetBase(request)) };
    },
  },
  {
    ...item,
    method: 'PUT',
    operationId: 'renameFile',
    summary: 'Rename a file',
    description: 'filename only (any other field: 400). The answer carries the new name and a file_url built from it; the old URL stops working.',
    idempotent: true,
    body: renameBody,
    responses: {
      '200': ok('The renamed file, with a new file_url', 'File'),
      ...common,
      ...none,
      ...writes,
      ...unsupportedMedia('application/json, application/x-www-form-urlencoded or multipart/form-data'),
    },
    handle: async (api, { request, user, params }) => {
      refuseQueryParameters(request.query);
      const fields = await readFields(request);
      const result = await api.idempotency.run(
        user,
        request.header('idempotency-key'),
        () => ({ method: 'PUT', path: request.path, content: fields }),
        async (trx) => ({ status: 200, body: await api.files.rename(trx, user, params.id, renameBody.parse(fields), api.assetBase(request)) }),
        { singleWrite: false, audit: request.audit },
      );
      return api.written(user, result);
    },
  },
  {
    ...item,
    method: 'DELETE',
    operationId: 'deleteFile',
    summary: 'Delete a file',
    description: 'Deletes the file and its stored bytes; its file_url answers 404 from then on.',
    idempotent: true,
    responses: { '204': empty('Deleted'), ...common, ...none, ...writes },
    handle: (api, call) => deleteOne(api, call, (trx) => api.files.delete(trx, call.user, call.params.id)),
  },
];

/** POST /v1/files: the bytes stream to storage first; they stay only if the row pointing at them commits. */
async function upload(api: Api, request: Call['request'], user: string) {
  if (bodyKind(request.header('content-type')) !== 'multipart') throw unsupportedMediaType('multipart/form-data');
  const received = await receiveUpload(request, api.store, api.config.maxUploadBytes);
  // Not on a refusal, a failure or an idempotent replay, where the handler does not run.
  let rowWritten = false;
  try {
    const file = received.file;
    const result = await api.idempotency.run(
      user,
      request.header('idempotency-key'),
      () => ({
        method: 'POST',
        path: request.path,
        content: {
          ...received.fields,
          file: file && { name: file.rawFilename, type: file.declaredType, size: file.size, sha256: file.sha256 },
        },
      }),
      async (trx) => {
        const body = await api.files.create(trx, user, received, api.assetBase(request));
        rowWritten = true;
        return { status: 201, body };
      },
      { audit: request.audit },
    );
    if (!rowWritten) await received.file?.blob.abort();
    return result;
  } catch (error) {
    // Not when the commit's outcome is unknown: its row may point at these bytes. If it does
    // not, the orphan sweep removes them.
    if (!isCommitOutcomeUnknown(error)) await received.file?.blob.abort();
    throw error;
  }
}
