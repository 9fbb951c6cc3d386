// Live updates across instances: the event triggers `pg_notify('parley_events', <user id>)` on
// commit (migration 0003_events); every instance LISTENs on one dedicated connection and pokes its
// channel of that user, if it holds any of their streams (one feed read per poke, shared by them
// all, pokes during a read coalesced: domain/event-hub.ts). PostgreSQL is the fan-out; no other
// service is needed. Notifications for users with no stream here cost a map lookup.

export const EVENTS_CHANNEL = 'parley_events';

/** What a notification pokes: domain/event-hub.ts's EventHub (named by its shape: storage is below domain). */
export interface EventPokes {
  /** Changes of this user were committed. */
  publish(user: string): void;
  /** Notifications may have been lost: every stream looks again. */
  publishAll(): void;
}

export interface NotificationListener {
  close(): Promise<void>;
}

export async function listenForEvents(
  databaseUrl: string,
  hub: EventPokes,
  log: Pick<Console, 'error'>,
): Promise<NotificationListener> {
  const pg = await import('pg');
  const Client = pg.default?.Client ?? pg.Client;
  let client: InstanceType<typeof Client> | null = null;
  let closed = false;
  let retryMs = 500;
  let timer: NodeJS.Timeout | null = null;

  const connect = async (): Promise<void> => {
    const next = new Client({ connectionString: databaseUrl });
    next.on('notification', (message) => {
      if (message.channel === EVENTS_CHANNEL && message.payload) hub.publish(message.payload);
    });
    next.on('error', (error) => {
      log.error('[parley] LISTEN connection lost; reconnecting', error.message);
      reconnect();
    });
    await next.connect();
    await next.query(`LISTEN ${EVENTS_CHANNEL}`);
    if (closed) return void next.end().catch(() => {});
    client = next;
    retryMs = 500;
  };

  const reconnect = () => {
    const old = client;
    client = null;
    void old?.end().catch(() => {});
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = null;
      connect().then(
        () => hub.publishAll(), // notifications sent while we were away are lost: everyone looks again
        (error) => {
          log.error('[parley] LISTEN reconnect failed', error instanceof Error ? error.message : error);
          retryMs = Math.min(retryMs * 2, 30_000);
          reconnect();
        },
      );
    }, retryMs);
    timer.unref();
  };

  await connect();
  return {
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await client?.end().catch(() => {});
      client = null;
    },
  };
}
