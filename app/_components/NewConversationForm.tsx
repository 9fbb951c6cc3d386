'use client';
// The new-conversation dialog's form, loaded after the first screen (NewConversation.tsx).
import { useLiveQuery } from 'dexie-react-hooks';
import { useState, type FormEvent } from 'react';
import { SyncInputError } from '@/lib/sync/page';
import { readKnownIds } from '@/lib/view/windows';
import type { NewConversationRequest } from './NewConversation';
import { useSession } from './session-context';
import { navigate } from './router';

/** At most this many ids offered at once. */
const SUGGESTIONS = 20;

export function NewConversationForm({ initial, onClose }: { initial: NewConversationRequest; onClose(): void }) {
  const { connection } = useSession();
  const [kind, setKind] = useState<'contact_id' | 'group_id'>(initial.group ? 'group_id' : 'contact_id');
  const [value, setValue] = useState(initial.id);
  const [error, setError] = useState<string | null>(null);
  // Ids this device already knows (the mirror's conversations), starting with what is typed: one
  // bounded read of the search words' index per keystroke, offered by the field's <datalist>.
  const typed = value.trim();
  const known = useLiveQuery(() => readKnownIds(connection.db, kind, typed, SUGGESTIONS), [connection.db, kind, typed]);

  async function submit(event: FormEvent) {
    event.preventDefault();
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
        aria-describedby={error ? 'new-id-error' : 'new-id-help'}
      />
      <datalist id="new-id-known" data-testid="known-ids">
        {known?.map((id) => <option key={id} value={id} />)}
      </datalist>
      <p id="new-id-help" className="help">
        1-64 characters: letters, digits, “_” and “-”.
      </p>
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
          Create
        </button>
      </div>
    </form>
  );
}
