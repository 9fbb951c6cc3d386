// /v1/conversations and /v1/conversations/{id}.
import { z } from 'zod';
import { ConversationCreateInput, ConversationListQuery, ConversationUpdateInput, Id } from '../../schemas';
import { readFields } from '../http/body';
import { refuseQueryParameters } from '../domain/pagination';
import { common, empty, notFound, ok, retryable, unsupportedMedia, writes } from './responses';
import { deleteOne, fieldsBody, listQueryOf, type Route } from './route';

const item = { path: '/v1/conversations/{id}', tag: 'Conversations', params: z.strictObject({ id: Id }), missing: 'conversation' } as const;
const fieldsMedia = 'application/json, application/x-www-form-urlencoded or multipart/form-data';
const none = notFound('no such conversation (or not the caller\'s)');
const listQuery = listQueryOf(ConversationListQuery);
const createBody = fieldsBody(ConversationCreateInput, 'ConversationCreate', true);
const updateBody = fieldsBody(ConversationUpdateInput, 'ConversationUpdate', false);

export const conversationRoutes: Route[] = [
  {
    method: 'GET',
    path: '/v1/conversations',
    tag: 'Conversations',
    operationId: 'listConversations',
    summary: 'List conversations',
    description: 'A page of the caller\'s conversations, newest first; the filters narrow it.',
    query: listQuery.schema,
    responses: { '200': ok('A page, newest first', 'ConversationPage'), ...common },
    handle: async (api, { request, user }) => {
      const { list, filters } = listQuery.parse(request.query);
      return { status: 200, body: await api.conversations.list(api.db, user, list, filters) };
    },
  },
  {
    method: 'POST',
    path: '/v1/conversations',
    tag: 'Conversations',
    operationId: 'createConversation',
    summary: 'Create a conversation',
    description: 'With exactly one of contact_id or group_id (neither or both: 400). One conversation per contact and per group.',
    idempotent: true,
    body: createBody,
    responses: {
      '201': ok('Created', 'Conversation'),
      ...common,
      ...writes,
      '409': retryable(
        'conversation_exists (with existing_id: the conversation of this contact or group), idempotency_conflict, or idempotency_in_progress (retry after Retry-After with the same key)',
      ),
      ...unsupportedMedia(fieldsMedia),
    },
    handle: async (api, { request, user }) => {
      refuseQueryParameters(request.query); // before any body is read
      const fields = await readFields(request);
      const result = await api.idempotency.run(
        user,
        request.header('idempotency-key'),
        () => ({ method: 'POST', path: request.path, content: fields }),
        async (trx) => ({ status: 201, body: await api.conversations.create(trx, user, createBody.parse(fields)) }),
        { audit: request.audit },
      );
      return api.written(user, result);
    },
  },
  {
    ...item,
    method: 'GET',
    operationId: 'retrieveConversation',
    summary: 'Retrieve a conversation',
    description: 'The conversation. No side effect.',
    responses: { '200': ok('The conversation', 'Conversation'), ...common, ...none },
    handle: async (api, { request, user, params }) => {
      refuseQueryParameters(request.query);
      return { status: 200, body: await api.conversations.retrieve(api.db, user, params.id) };
    },
  },
  {
    ...item,
    method: 'PUT',
    operationId: 'updateConversation',
    summary: 'Update a conversation',
    description: 'Only the fields given change; an unknown field is 400.',
    idempotent: true,
    body: updateBody,
    responses: { '200': ok('The updated conversation', 'Conversation'), ...common, ...none, ...writes, ...unsupportedMedia(fieldsMedia) },
    handle: async (api, { request, user, params }) => {
      refuseQueryParameters(request.query);
      const fields = await readFields(request);
      const result = await api.idempotency.run(
        user,
        request.header('idempotency-key'),
        () => ({ method: 'PUT', path: request.path, content: fields }),
        async (trx) => ({ status: 200, body: await api.conversations.update(trx, user, params.id, updateBody.parse(fields)) }),
        { singleWrite: true, audit: request.audit },
      );
      return api.written(user, result);
    },
  },
  {
    ...item,
    method: 'DELETE',
    operationId: 'deleteConversation',
    summary: 'Delete a conversation',
    description: 'Deletes it with its messages, its files and their stored bytes, and the unfinished uploads (/v1/uploads) into it with theirs.',
    idempotent: true,
    responses: { '204': empty('Deleted'), ...common, ...none, ...writes },
    handle: async (api, call) => {
      const result = await deleteOne(api, call, (trx) => api.conversations.delete(trx, call.user, call.params.id));
      // Its uploads went with it (by trigger); a PATCH of this process still writing to one is ended.
      await api.uploads.endDeleted().catch((error) => api.log.error('[parley] ending the uploads of a deleted conversation failed:', error));
      return result;
    },
  },
];
