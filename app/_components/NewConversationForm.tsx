'use client';
// The new-conversation dialog's form, loaded after the first screen (NewConversation.tsx).
import { useLiveQuery } from 'dexie-react-hooks';
import { useEffect, useState, type FormEvent } from 'react';
import { SyncInputError } from '@/lib/sync/page';
import { readNearIds, type NearId } from '@/lib/view/close-matches';
import { readKnownIds } from '@/lib/view/windows';
import type { NewConversationRequest } from './NewConversation';
import { useSession } from './session-context';
import { navigate } from './router';

/** At most this many ids offered at once. */
const SUGGESTIONS = 20;
/** At most this many near ids in the warning. */
const NEAR_IDS = 3;

const apart = (edits: number) => (edits === 0 ? 'only capitals or accents differ' : edits === 1 ? 'one character different' : 'two characters different');

export function NewConversationForm({ initial, onClose }: { initial: NewConversationRequest; onClose(): void }) {
  const { connection } = useSession();
  const [kind, setKind] = useState<'contact_id' | 'group_id'>(initial.group ? 'group_id' : 'contact_id');
  const [value, setValue] = useState(initial.id);
  const [error, setError] = useState<string | null>(null);
  // Ids this device already knows (the mirror's conversations), starting with what is typed: one
  // bounded read of the search words' index per keystroke, offered by the field's <datalist>.
  const typed = value.trim();
  const known = useLiveQuery(() => readKnownIds(connection.db, kind, typed, SUGGESTIONS), [connection.db, kind, typed]);

  // Ids one or two edits from the one typed (a typo would start a second conversation for the same
  // patient): looked for once typing pauses, and again on Create if not yet; while shown, Create
  // reads "Create anyway".
  const [near, setNear] = useState<{ kind: string; typed: string; ids: NearId[] } | null>(null);
  const nearNow = near && near.kind === kind && near.typed === typed ? near.ids : null;
  useEffect(() => {
    let cancelled = false;
    const timer = setTimeout(() => void readNearIds(connection.db, kind, typed, NEAR_IDS).then((ids) => !cancelled && setNear({ kind, typed, ids })), 300);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [connection.db, kind, typed]);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (nearNow === null) {
      // The check's code could not be fetched (offline, never loaded): no warning rather than no conversation.
      const ids = await readNearIds(connection.db, kind, typed, NEAR_IDS).catch(() => []);
      setNear({ kind, typed, ids });
      if (ids.length > 0) return; // warned first: Create again ("Create anyway") creates
    }
    try {
      // The client checks the id with the schema the server uses: one it would refuse is never queued.
      const id = await connection.client.createConversation(kind === 'contact_id' ? { contact_id: value.trim() } : { group_id: value.trim() });
      onClose();
      navigate({ name: 'conversation', id });
    } catch (e) {
      if (e instanceof SyncInputError && e.param === kind) return setError(`${kind === 'contact_id' ? 'Contact' : 'Group'} id ${e.message}`);
      setError(e instanceof Error ? e.message : String(e));
    }
  }

  return (
    <form onSubmit={submit} noValidate>
      {/* Two large toggles (the radios fill them: a 44 px target each), not 13 px dots. */}
      <fieldset className="toggles">
        <legend>With</legend>
        <label className="toggle">
          <input type="radio" name="kind" checked={kind === 'contact_id'} onChange={() => setKind('contact_id')} />
          <span>a contact</span>
        </label>
        <label className="toggle">
          <input type="radio" name="kind" checked={kind === 'group_id'} onChange={() => setKind('group_id')} />
          <span>a group</span>
        </label>
      </fieldset>
      <label htmlFor="new-id">{kind === 'contact_id' ? 'Contact id' : 'Group id'}</label>
      <input
        id="new-id"
        value={value}
        onChange={(e) => setValue(e.target.value)}
        list="new-id-known"
        autoComplete="off"
        autoCapitalize="none"
        autoCorrect="off"
        spellCheck={false}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? 'new-id-error' : nearNow?.length ? 'new-id-help new-id-near' : 'new-id-help'}
      />
      <datalist id="new-id-known" data-testid="known-ids">
        {known?.map((id) => <option key={id} value={id} />)}
      </datalist>
      <p id="new-id-help" className="help">
        1-64 characters: letters, digits, “_” and “-”.
      </p>
      {nearNow && nearNow.length > 0 && (
        <div id="new-id-near" className="warning" role="status">
          <p>Is it the same patient? This device already has:</p>
          <ul>
            {nearNow.map((n) => (
              <li key={n.conversationId}>
                <button
                  type="button"
                  onClick={() => {
                    onClose();
                    navigate({ name: 'conversation', id: n.conversationId });
                  }}
                >
                  Open ‘{n.id}’
                </button>{' '}
                ({apart(n.edits)})
              </li>
            ))}
          </ul>
        </div>
      )}
      {error && (
        <p id="new-id-error" className="error" role="alert">
          {error}
        </p>
      )}
      <div className="actions">
        <button type="button" onClick={onClose}>
          Cancel
        </button>
        <button type="submit" className="primary">
          {nearNow?.length ? 'Create anyway' : 'Create'}
        </button>
      </div>
    </form>
  );
}
