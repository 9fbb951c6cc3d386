// Who is waiting for a user's changes: the live streams (GET /v1/events/stream) of this process.
// A publish is only a poke ("something changed for this user"); each stream then reads the feed
// from its own cursor, so a lost or duplicated poke costs a query, never an event.
// Publishers: this process after each write it answered, and — with PostgreSQL — every instance's
// commits, through LISTEN/NOTIFY (storage/pg-notifications.ts).
export class EventHub {
  private readonly listeners = new Map<string, Set<() => void>>();

  subscribe(user: string, listener: () => void): () => void {
    let set = this.listeners.get(user);
    if (!set) this.listeners.set(user, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(user) === set) this.listeners.delete(user);
    };
  }

  publish(user: string): void {
    for (const listener of this.listeners.get(user) ?? []) listener();
  }

  /** After notifications may have been missed (a dropped LISTEN connection): everyone looks again. */
  publishAll(): void {
    for (const user of [...this.listeners.keys()]) this.publish(user);
  }

  /** Open streams, for tests and shutdown. */
  get size(): number {
    let n = 0;
    for (const set of this.listeners.values()) n += set.size;
    return n;
  }
}
