'use client';
import { useLiveQuery } from 'dexie-react-hooks';
import { useEffect, useRef, useState, type ChangeEvent, type ReactNode } from 'react';
import { onDeviceFileIds } from '@/lib/offline/on-device';
import { isKept } from '@/lib/offline/policy';
import { readKeepPinned, setKeepOffline, wakeDownloaderOnConnectionChange } from '@/lib/offline/settings';
import { aliasOf, conversationById, filesOfConversation, type ConversationView, type FileView } from '@/lib/sync/page';
import { conversationTitle, syncMark } from '@/lib/view/conversations';
import { humanSize, humanTime, humanType } from '@/lib/view/format';
import { keptOfflineState } from '@/lib/view/kept-offline';
import { failureText, useAction } from './ActionAlert';
import { ConversationMore, ConversationToggles } from './ConversationActions';
import { useConversationActions } from './conversation-actions';
import { FileActions, FileLink, OnDeviceMark } from './FileActions';
import { Icon } from './Icon';
import { followAlias, hrefFor, navigate } from './router';
import { useSession } from './session-context';
import { UploadProgressMark } from './UploadProgress';

/** `inPane`: beside the list on a wide screen (no way back to it needed; ParleyApp). */
export function ConversationScreen({ id, inPane = false }: { id: string; inPane?: boolean }) {
  const { connection } = useSession();
  const { db, client } = connection;
  const conversation = useLiveQuery(() => conversationById(db, id), [db, id], null);
  const alias = useLiveQuery(() => aliasOf(db, id), [db, id]);
  const files = useLiveQuery(() => filesOfConversation(db, id), [db, id]);
  const onDevice = useLiveQuery(() => onDeviceFileIds(db, files ?? []), [db, files]);
  const opened = useRef<string | null>(null);

  // A conversation created offline had a temporary id; follow it to the server's id.
  useEffect(() => {
    if (alias) followAlias({ name: 'conversation', id }, { name: 'conversation', id: alias.realId });
  }, [alias, id]);

  // Opening a conversation records last_opened_at (once per visit).
  useEffect(() => {
    if (conversation && opened.current !== id) {
      opened.current = id;
      void client.markOpened(id).catch(() => {});
    }
  }, [conversation, id, client]);

  if (conversation === null) return <p className="empty">Loading…</p>;
  if (conversation === undefined) {
    return (
      <section className="screen">
        <p className="empty">This conversation is not here (it may have been deleted).</p>
        <a className="touch-link" href="/" onClick={(e) => { e.preventDefault(); navigate({ name: 'conversations' }); }}>Back to conversations</a>
      </section>
    );
  }
  return <OpenConversation conversation={conversation} files={files} onDevice={onDevice} inPane={inPane} />;
}

/** The page of a conversation that is here; its files while they are read (undefined) too. */
function OpenConversation({ conversation, files, onDevice, inPane }: { conversation: ConversationView; files: FileView[] | undefined; onDevice: Set<string> | undefined; inPane: boolean }) {
  const { client } = useSession().connection;
  const { id } = conversation;
  const heading = useRef<HTMLHeadingElement>(null);
  // Chosen in the list beside it (the focus on its row's link, now the current page): the focus
  // follows to this pane's heading, so the keyboard and a screen reader go on from what was
  // opened. Not for any other way here (back, forward, a new id for the same conversation):
  // the focus stays where the user has it, e.g. typing a search.
  useEffect(() => {
    if (inPane && document.activeElement?.matches('.conversations-screen a[aria-current="page"]')) heading.current?.focus();
  }, [inPane]);
  const [uploadError, setUploadError] = useState<string | null>(null);
  const { run, alert } = useAction();
  // The file the pinned message was last shown as (its row marked).
  const [shown, setShown] = useState<string | null>(null);
  const keep = useKeepOffline(conversation, (files ?? []).filter((f) => f.syncState !== 'pending' || f.file_url !== '').length);
  // One set of the conversation's actions for the bar and "More actions": one failure shown at a time.
  const actions = useConversationActions(conversation, { onDeleted: () => navigate({ name: 'conversations' }, { replace: true }) });

  async function upload(event: ChangeEvent<HTMLInputElement>) {
    const picked = [...(event.target.files ?? [])];
    event.target.value = '';
    setUploadError(null);
    for (const file of picked) {
      try {
        await client.uploadFile({ conversationId: id }, { name: file.name, type: file.type, bytes: file });
      } catch (e) {
        setUploadError(`Couldn’t upload “${file.name}”: ${failureText(e)}`);
      }
    }
  }

  const sorted = [...(files ?? [])].sort((a, b) => b.created_at - a.created_at);
  const pinnedFile = sorted.find((f) => f.message_id === conversation.pinned_message_id);
  const title = conversationTitle(conversation);
  const mark = syncMark(conversation.syncState);

  /**
   * The pinned message, as a messaging app jumps to one: its file's row scrolled into view and
   * marked, and the keyboard's focus on its name (one more tap or Enter opens it).
   */
  function showPinned(fileId: string) {
    setShown(fileId);
    const row = document.querySelector<HTMLElement>(`[data-file-id="${CSS.escape(fileId)}"]`);
    row?.querySelector<HTMLElement>('a.file-link')?.focus({ preventScroll: true });
    row?.scrollIntoView({ block: 'center', behavior: matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth' });
  }

  // Content first: the head (the name, and under it the kind and what "Keep offline" has done),
  // one bar of actions (the permanent delete is in the head's "More actions", away from them),
  // the pinned message, then the files — on a phone within the first third of the screen
  // (content-first.spec).
  return (
    <section className="screen conversation" aria-labelledby="conversation-title">
      <div className="screen-head">
        {!inPane && (
          <a className="icon-button" href="/" aria-label="Back to conversations" onClick={(e) => { e.preventDefault(); navigate({ name: 'conversations' }); }}>
            <Icon name="back" />
          </a>
        )}
        <div className="head-text">
          <h1 id="conversation-title" ref={heading} tabIndex={-1}>
            {title}
          </h1>
          <p className="head-line">
            <span className="kind">{conversation.group_id !== null ? 'Group' : 'Contact'}</span>
            {keep.state && (
              <>
                <span aria-hidden="true"> · </span>
                {keep.state}
              </>
            )}
          </p>
        </div>
        {mark && <span className={`mark ${conversation.syncState}`}>{mark}</span>}
        <ConversationMore conversation={conversation} actions={actions} />
      </div>

      <div className="action-bar" role="group" aria-label="Actions">
        <label className="button primary">
          <Icon name="upload" />
          <span>Upload files</span>
          <input type="file" multiple onChange={upload} className="visually-hidden" aria-label="Upload files" />
        </label>
        <label className="button">
          <Icon name="camera" />
          <span>Take photo</span>
          <input type="file" accept="image/*" capture="environment" onChange={upload} className="visually-hidden" aria-label="Take photo" />
        </label>
        <ConversationToggles conversation={conversation} actions={actions} />
        {keep.button}
      </div>
      {uploadError && <p className="error" role="alert">{uploadError}</p>}
      {alert}
      {actions.alert}

      {pinnedFile && (
        <button type="button" className="pinned" title="Show it in the list" onClick={() => showPinned(pinnedFile.id)}>
          <Icon name="pin" />
          <span>Pinned message: {pinnedFile.filename}</span>
        </button>
      )}

      <h2 className="visually-hidden">Files</h2>
      {files === undefined ? (
        <p className="empty">Loading…</p>
      ) : sorted.length === 0 ? (
        <p className="empty">No files yet.</p>
      ) : (
        <ul className="file-list" aria-label="Files">
          {sorted.map((f) => {
            const pinned = f.message_id === conversation.pinned_message_id;
            const classes = [f.syncState !== 'synced' && `unsynced ${f.syncState}`, f.id === shown && 'shown'].filter(Boolean).join(' ');
            return (
              <li key={f.id} data-file-id={f.id} className={classes || undefined}>
                <span className="file-name">
                  <FileLink file={f} conversationId={id} />
                  {f.syncState !== 'synced' && <span className={`mark ${f.syncState}`}>{f.syncState === 'pending' ? 'unsynced' : 'failed'}</span>}
                  {f.syncState === 'pending' && <UploadProgressMark fileId={f.id} />}
                  {onDevice?.has(f.id) && <OnDeviceMark />}
                </span>
                <span className="file-meta">
                  {humanType(f.file_type)} · {humanSize(f.file_size)} · {humanTime(f.created_at)}
                </span>
                <span className="row-actions">
                  <button
                    type="button"
                    className="icon-button"
                    aria-pressed={pinned}
                    aria-label={pinned ? `Unpin the message of ${f.filename}` : `Pin the message of ${f.filename}`}
                    title={pinned ? 'Unpin message' : 'Pin message'}
                    onClick={() => void run(pinned ? `unpin the message of “${f.filename}”` : `pin the message of “${f.filename}”`, () => client.updateConversation(id, { pinned_message_id: pinned ? null : f.message_id }))}
                  >
                    <Icon name="pin" />
                  </button>
                  <FileActions file={f} />
                </span>
              </li>
            );
          })}
        </ul>
      )}
      <a className="touch-link" href={hrefFor({ name: 'files', conversationId: id })} onClick={(e) => { e.preventDefault(); navigate({ name: 'files', conversationId: id }); }}>
        All files of this conversation
      </a>
    </section>
  );
}

/**
 * "Keep offline": the conversation's files are downloaded in the background by the service worker
 * (lib/offline/downloader.ts), or the sync worker on a device with a lock (sealed-downloads.ts),
 * and kept out of eviction. Pinned conversations are kept unless the
 * Device screen's setting says otherwise; the toggle is the user's own choice and wins.
 * Its button goes in the action bar; what it has done (how many files are on the device) under the
 * name in the head, once kept. Not kept, the button's description says what it would do.
 */
function useKeepOffline(conversation: ConversationView, fileCount: number): { button: ReactNode; state: ReactNode } {
  const { connection } = useSession();
  const { db } = connection;
  const { run, alert } = useAction();
  const { id } = conversation;
  const choice = useLiveQuery(() => db.offlineKeep.get(id), [db, id], null);
  const keepPinned = useLiveQuery(() => readKeepPinned(db), [db], null);
  const onDevice = useLiveQuery(() => db.offlineFiles.where('conversationId').equals(id).filter((f) => f.complete).count(), [db, id], 0);
  const kept = choice !== null && keepPinned !== null && isKept(conversation, choice?.keep, keepPinned);
  // A kept conversation on screen: resume its downloads now and when the connection changes.
  useEffect(() => (kept ? wakeDownloaderOnConnectionChange(db.name) : undefined), [kept, db]);
  if (choice === null || keepPinned === null) return { button: null, state: null };
  return {
    button: (
      <>
        <button
          type="button"
          aria-pressed={kept}
          aria-describedby={kept ? 'keep-offline-state' : undefined}
          title={kept ? 'Stop keeping this conversation’s files on this device' : 'Files are kept on this device only once opened: download them all to open them with no network'}
          onClick={() => void run(kept ? 'stop keeping the files offline' : 'keep the files offline', () => setKeepOffline(db, id, !kept))}
        >
          <Icon name="download" />
          <span>Keep offline</span>
        </button>
        {alert}
      </>
    ),
    state: kept && (
      <span id="keep-offline-state" data-testid="keep-offline-state">
        {keptOfflineState(onDevice, fileCount, choice === undefined)}
      </span>
    ),
  };
}
