'use client';
import { useLiveQuery } from 'dexie-react-hooks';
import { useEffect, useRef, useState, type ChangeEvent } from 'react';
import { onDeviceFileIds } from '@/lib/offline/on-device';
import { isKept } from '@/lib/offline/policy';
import { readKeepPinned, setKeepOffline, wakeDownloaderOnConnectionChange } from '@/lib/offline/settings';
import { aliasOf, conversationById, filesOfConversation, type ConversationView } from '@/lib/sync/page';
import { conversationTitle, syncMark } from '@/lib/view/conversations';
import { humanSize, humanTime, humanType } from '@/lib/view/format';
import { failureText, useAction } from './ActionAlert';
import { ConversationActions } from './ConversationActions';
import { FileActions, FileLink, OnDeviceMark } from './FileActions';
import { Icon } from './Icon';
import { hrefFor, navigate } from './router';
import { useSession } from './session-context';
import { UploadProgressMark } from './UploadProgress';

export function ConversationScreen({ id }: { id: string }) {
  const { connection } = useSession();
  const { db, client } = connection;
  const conversation = useLiveQuery(() => conversationById(db, id), [db, id], null);
  const alias = useLiveQuery(() => aliasOf(db, id), [db, id]);
  const files = useLiveQuery(() => filesOfConversation(db, id), [db, id]);
  const onDevice = useLiveQuery(() => onDeviceFileIds(db, files ?? []), [db, files]);
  const [uploadError, setUploadError] = useState<string | null>(null);
  const { run, alert } = useAction();
  const opened = useRef<string | null>(null);

  // A conversation created offline had a temporary id; follow it to the server's id.
  useEffect(() => {
    if (alias) navigate({ name: 'conversation', id: alias.realId }, { replace: true });
  }, [alias]);

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

  return (
    <section className="screen" aria-labelledby="conversation-title">
      <div className="screen-head">
        <a className="icon-button" href="/" aria-label="Back to conversations" onClick={(e) => { e.preventDefault(); navigate({ name: 'conversations' }); }}>
          <Icon name="back" />
        </a>
        <h1 id="conversation-title">
          <span className="kind">{conversation.group_id !== null ? 'Group' : 'Contact'}</span> {title}
        </h1>
      </div>
      <div className="conversation-meta">
        <ConversationActions conversation={conversation} onDeleted={() => navigate({ name: 'conversations' }, { replace: true })} />
        <p>
          Created {humanTime(conversation.created_at)} · last active {humanTime(conversation.last_active_at)}
          {conversation.archived_at !== null && <> · archived {humanTime(conversation.archived_at)}</>}
          {syncMark(conversation.syncState) && <span className={`mark ${conversation.syncState}`}>{syncMark(conversation.syncState)}</span>}
        </p>
        {pinnedFile && <p className="pinned">Pinned message: {pinnedFile.filename}</p>}
        <KeepOffline conversation={conversation} fileCount={sorted.filter((f) => f.syncState !== 'pending' || f.file_url !== '').length} />
      </div>

      <div className="upload">
        <label className="button primary with-label">
          <Icon name="upload" />
          <span>Upload files</span>
          <input type="file" multiple onChange={upload} className="visually-hidden" aria-label="Upload files" />
        </label>
        <label className="button with-label">
          <Icon name="camera" />
          <span>Take photo</span>
          <input type="file" accept="image/*" capture="environment" onChange={upload} className="visually-hidden" aria-label="Take photo" />
        </label>
        <a className="touch-link" href={hrefFor({ name: 'files', conversationId: id })} onClick={(e) => { e.preventDefault(); navigate({ name: 'files', conversationId: id }); }}>
          All files of this conversation
        </a>
      </div>
      {uploadError && <p className="error" role="alert">{uploadError}</p>}
      {alert}

      <h2>Files</h2>
      {files === undefined ? (
        <p className="empty">Loading…</p>
      ) : sorted.length === 0 ? (
        <p className="empty">No files yet.</p>
      ) : (
        <ul className="file-list" aria-label="Files">
          {sorted.map((f) => {
            const pinned = f.message_id === conversation.pinned_message_id;
            return (
              <li key={f.id} className={f.syncState !== 'synced' ? `unsynced ${f.syncState}` : undefined}>
                <span className="file-name">
                  <FileLink file={f} />
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
    </section>
  );
}

/**
 * "Keep offline": the conversation's files are downloaded in the background by the service worker
 * (lib/offline/downloader.ts), or the sync worker on a device with a lock (sealed-downloads.ts),
 * and kept out of eviction. Pinned conversations are kept unless the
 * Device screen's setting says otherwise; the toggle is the user's own choice and wins.
 */
function KeepOffline({ conversation, fileCount }: { conversation: ConversationView; fileCount: number }) {
  const { connection } = useSession();
  const { db } = connection;
  const { run, alert } = useAction();
  const choice = useLiveQuery(() => db.offlineKeep.get(conversation.id), [db, conversation.id], null);
  const keepPinned = useLiveQuery(() => readKeepPinned(db), [db], null);
  const onDevice = useLiveQuery(() => db.offlineFiles.where('conversationId').equals(conversation.id).filter((f) => f.complete).count(), [db, conversation.id], 0);
  const kept = choice !== null && keepPinned !== null && isKept(conversation, choice?.keep, keepPinned);
  // A kept conversation on screen: resume its downloads now and when the connection changes.
  useEffect(() => (kept ? wakeDownloaderOnConnectionChange(db.name) : undefined), [kept, db]);
  if (choice === null || keepPinned === null) return null;
  return (
    <div className="keep-offline">
      <button
        type="button"
        className="with-label"
        aria-pressed={kept}
        title={kept ? 'Stop keeping this conversation’s files on this device' : 'Download this conversation’s files to open them with no network'}
        onClick={() => void run(kept ? 'stop keeping the files offline' : 'keep the files offline', () => setKeepOffline(db, conversation.id, !kept))}
      >
        <Icon name="file" />
        <span>Keep offline</span>
      </button>{' '}
      <span data-testid="keep-offline-state">
        {kept
          ? `${Math.min(onDevice, fileCount)} of ${fileCount} files on this device${choice === undefined ? ' (pinned)' : ''}`
          : 'Files are kept on this device only once opened'}
      </span>
      {alert}
    </div>
  );
}
