'use client';
import { useState, type FormEvent } from 'react';
import { SyncInputError } from '@/lib/sync/errors';
import { Dialog } from './Dialog';
import { Icon } from './Icon';
import { useSession } from './session-context';
import { navigate } from './router';

export function NewConversation() {
  const { connection } = useSession();
  const [open, setOpen] = useState(false);
  const [kind, setKind] = useState<'contact_id' | 'group_id'>('contact_id');
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | null>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    try {
      // The client checks the id with the schema the server uses: one it would refuse is never queued.
      const id = await connection.client.createConversation(kind === 'contact_id' ? { contact_id: value.trim() } : { group_id: value.trim() });
      setOpen(false);
      setValue('');
      setError(null);
      navigate({ name: 'conversation', id });
    } catch (e) {
      if (e instanceof SyncInputError && e.param === kind) return setError(`${kind === 'contact_id' ? 'Contact' : 'Group'} id ${e.message}`);
      setError(e instanceof Error ? e.message : String(e));
    }
  }

  return (
    <>
      <button type="button" className="primary with-label" onClick={() => setOpen(true)}>
        <Icon name="plus" />
        <span>New conversation</span>
      </button>
      <Dialog title="New conversation" open={open} onClose={() => setOpen(false)}>
        <form onSubmit={submit} noValidate>
          <fieldset>
            <legend>With</legend>
            <label>
              <input type="radio" name="kind" checked={kind === 'contact_id'} onChange={() => setKind('contact_id')} /> a contact
            </label>
            <label>
              <input type="radio" name="kind" checked={kind === 'group_id'} onChange={() => setKind('group_id')} /> a group
            </label>
          </fieldset>
          <label htmlFor="new-id">{kind === 'contact_id' ? 'Contact id' : 'Group id'}</label>
          <input
            id="new-id"
            value={value}
            onChange={(e) => setValue(e.target.value)}
            autoComplete="off"
            spellCheck={false}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? 'new-id-error' : 'new-id-help'}
          />
          <p id="new-id-help" className="help">
            1-64 characters: letters, digits, “_” and “-”.
          </p>
          {error && (
            <p id="new-id-error" className="error" role="alert">
              {error}
            </p>
          )}
          <div className="actions">
            <button type="button" onClick={() => setOpen(false)}>
              Cancel
            </button>
            <button type="submit" className="primary">
              Create
            </button>
          </div>
        </form>
      </Dialog>
    </>
  );
}
