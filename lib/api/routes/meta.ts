// What the service says about itself: /v1/openapi.json, and /v1/me (the token's user; an extension).
import { z } from 'zod';
import { unknownParam } from '../errors';
import { common, ok, publicCommon } from './responses';
import type { Route } from './route';

export const metaRoutes: Route[] = [
  {
    method: 'GET',
    path: '/v1/openapi.json',
    tag: 'Service',
    access: 'public',
    operationId: 'retrieveOpenApiDocument',
    summary: 'This document',
    description: 'The OpenAPI 3.1 description of /v1, written from the route table the service dispatches on. No token needed.',
    responses: { '200': { description: 'The document', content: { 'application/json': { schema: { type: 'object' } } } }, ...publicCommon },
    handle: (api) => ({ status: 200, body: JSON.parse(api.openapiText()), headers: { 'Cache-Control': 'no-store' } }),
  },
  {
    method: 'GET',
    path: '/v1/me',
    tag: 'Service',
    extension: 'me',
    operationId: 'retrieveMe',
    summary: 'Who the token belongs to',
    description: 'Extension: the user the bearer token belongs to (a device keys its local data by user, not by token).',
    query: z.strictObject({}),
    responses: { '200': ok('The token\'s user', 'Me'), ...common },
    handle: (_api, { request, user }) => {
      for (const name of request.query.keys()) throw unknownParam(name);
      return { status: 200, body: { id: user } };
    },
  },
];
