// The route table of /v1: the service dispatches on it and the OpenAPI document is written from
// it. A path's routes are listed in the order its Allow header names their methods.
import { conversationRoutes } from './conversations';
import { deviceRoutes } from './devices';
import { eventRoutes } from './events';
import { fileRoutes } from './files';
import { metaRoutes } from './meta';
import type { Route } from './route';
import { uploadRoutes } from './uploads';

export const ROUTES: readonly Route[] = [...conversationRoutes, ...fileRoutes, ...eventRoutes, ...uploadRoutes, ...metaRoutes, ...deviceRoutes];

export type { Api, Call, Route } from './route';
export { Router, allowed, routeFor } from './router';
