// The change feed (extension): /v1/events and its live form /v1/events/stream.
import { z } from 'zod';
import { Cursor, EventsQuery, EventStreamQuery } from '../../schemas';
import { bearerToken } from '../domain/tokens';
import { unknownParam } from '../errors';
import { EVENT_STREAM_HEADERS, EventStream } from '../http/event-stream';
import { common, error, ok, retryable } from './responses';
import { DEFAULT_EVENTS_LIMIT } from '../domain/events';
import { queryOf, type Route } from './route';

const eventsQuery = queryOf(EventsQuery);
const expired = (what: string) => ({ '410': error(`events_expired: ${what}`) });

export const eventRoutes: Route[] = [
  {
    method: 'GET',
    path: '/v1/events',
    tag: 'Events',
    extension: 'events',
    operationId: 'listEvents',
    summary: 'List changes after a cursor',
    description:
      'Extension: the change feed. Changes to the caller\'s conversations and files after a cursor, oldest first, each with the object as GET returns it now (or {id} for a deletion); several changes of one object within a page collapse into its last. Without `after`, or with limit=0, tells the head cursor to follow from after a full listing.',
    query: eventsQuery.schema,
    responses: {
      '200': ok('Events after the cursor', 'EventPage'),
      ...common,
      ...expired('the cursor is older than the retention (or from another database); list everything again'),
    },
    handle: async (api, { request, user }) => {
      const query = eventsQuery.parse(request.query);
      const limit = query.limit === undefined ? DEFAULT_EVENTS_LIMIT : Number(query.limit);
      const after = query.after === undefined ? null : api.feed.decode(user, query.after);
      if (after === null || limit === 0) {
        if (after !== null) await api.feed.check(user, after);
        return { status: 200, body: { data: [], has_more: false, next: api.feed.encode(user, after ?? (await api.feed.head(user))) } };
      }
      return { status: 200, body: await api.feed.page(user, after, limit, api.assetBase(request)) };
    },
  },
  {
    method: 'GET',
    path: '/v1/events/stream',
    tag: 'Events',
    extension: 'events',
    access: 'stream',
    operationId: 'streamEvents',
    summary: 'Follow changes live (Server-Sent Events)',
    description:
      'Extension: the change feed live. Each message carries `id: <cursor>` and `data: <an Event>`; a comment line is sent at least every 30 s. Resumes after the `Last-Event-ID` header (or `after`), else from the head. An `event: error` message with an Error body (events_expired; unauthenticated once the token is no longer accepted, re-checked at least every 10 s) ends the stream. At most MAX_STREAMS_PER_USER (per user) and MAX_STREAMS (in all) per instance.',
    query: EventStreamQuery,
    headers: z.strictObject({ 'Last-Event-ID': Cursor.meta({ description: 'The id of the last event received: the stream resumes after it' }).optional() }),
    responses: {
      '200': { description: 'An endless text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
      ...common,
      ...expired('the cursor is older than the retention'),
      '429': retryable('rate_limited: as many live streams are open as this instance takes (MAX_STREAMS_PER_USER per user, MAX_STREAMS in all); retry after Retry-After'),
    },
    // At most MAX_STREAMS_PER_USER per user and MAX_STREAMS in all on this instance (429 beyond);
    // the token is re-checked while the stream is open (event-hub.ts).
    handle: async (api, { request, user }) => {
      const token = bearerToken(request.header('authorization'));
      for (const name of request.query.keys()) if (name !== 'after') throw unknownParam(name);
      const lastEventId = request.header('last-event-id');
      const afterParam = request.query.get('after');
      const queryAfter = afterParam !== null ? api.feed.decode(user, afterParam) : null;
      const after = lastEventId ? api.feed.decode(user, lastEventId, 'Last-Event-ID') : (queryAfter ?? (await api.feed.head(user)));
      await api.feed.check(user, after);
      api.hub.admit(user); // no await between this and the stream's attaching
      const stream = new EventStream({
        hub: api.hub,
        user,
        token,
        after,
        assetBase: api.assetBase(request),
        heartbeatMs: api.config.eventsHeartbeatMs,
        log: api.log,
      });
      api.streams.add(stream);
      stream.once('close', () => api.streams.delete(stream));
      if (api.shuttingDown) stream.endGracefully();
      return { status: 200, headers: EVENT_STREAM_HEADERS, body: stream };
    },
  },
];
