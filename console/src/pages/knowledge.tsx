import { useRef, useState } from 'preact/hooks';
import { api, sendWithProgress, uploadFiles } from '../api';
import { PagedTable } from '../components/paged-table';
import { navigate } from '../router';
import type { KnowledgeFile, KnowledgeSource, Schemas, SearchResult, UploadTicket } from '../contract';
import { Empty, ErrorBox, FieldError, Highlighted, Loading, Stats, StatusBadge, Table, formatBytes, formatDate, useInterval, useAction, useLoad } from '../components/ui';

type Source = KnowledgeSource;

const BUSY = new Set(['pending', 'syncing', 'indexing']);

export function KnowledgeList() {
  return (
    <section>
      <div class="page-head">
        <h1>Knowledge sources</h1>
      </div>
      <CreateSource />
      <PagedTable<Source>
        path="/v1/knowledge-sources"
        what="knowledge sources"
        columns={['Name', 'Type', 'Status', 'Documents', 'Chunks', 'Updated']}
        pollWhile={(items) => items.some((s) => BUSY.has(s.status))}
        empty={
          <Empty title="No knowledge sources yet">
            <p>Create a file collection above, then drop PDFs, Word, PowerPoint, Excel, Markdown or text files on it. Agents cite what it holds.</p>
          </Empty>
        }
        row={(s) => (
          <tr key={s.id}>
            <td>
              <a href={`#/knowledge/${s.id}`}>{s.name}</a>
              <div class="muted small">{s.id}</div>
            </td>
            <td>{s.type}</td>
            <td>
              <StatusBadge status={s.status} />
            </td>
            <td>{s.stats?.documents ?? '—'}</td>
            <td>{s.stats?.chunks ?? '—'}</td>
            <td>{formatDate(s.updatedAt)}</td>
          </tr>
        )}
      />
    </section>
  );
}

function CreateSource() {
  const [name, setName] = useState('');
  const [type, setType] = useState('file-collection');
  const [urls, setUrls] = useState('');
  const [access, setAccess] = useState<'open' | 'restricted'>('open');
  const { busy, error, run } = useAction();
  function create(e: Event) {
    e.preventDefault();
    void run(async () => {
      const body =
        type === 'web'
          ? { name, type, access, config: { startUrls: urls.split(/\s+/).filter(Boolean) } }
          : { name, type: 'file-collection', access, files: [] as unknown[] };
      const source = await api<Source>('POST', '/v1/knowledge-sources', body);
      navigate(`/knowledge/${source.id}`);
    });
  }
  return (
    <form class="card editor" onSubmit={create} noValidate>
      <h2>New knowledge source</h2>
      <div class="grid-2">
        <div class="field">
          <label for="source-name">Name</label>
          <input id="source-name" value={name} onInput={(e) => setName(e.currentTarget.value)} placeholder="Help centre" />
          <FieldError error={error} field="name" />
        </div>
        <div class="field">
          <label for="source-type">Type</label>
          <select id="source-type" value={type} onChange={(e) => setType(e.currentTarget.value)}>
            <option value="file-collection">Files (upload)</option>
            <option value="web">Website (crawl)</option>
          </select>
        </div>
        <div class="field">
          <label for="source-access">Documents without readers of their own</label>
          <select id="source-access" value={access} onChange={(e) => setAccess(e.currentTarget.value as 'open' | 'restricted')}>
            <option value="open">Everyone may read them</option>
            <option value="restricted">Nobody may read them</option>
          </select>
        </div>
      </div>
      {type === 'web' ? (
        <div class="field">
          <label for="source-urls">Start URLs (one per line)</label>
          <textarea id="source-urls" rows={2} value={urls} onInput={(e) => setUrls(e.currentTarget.value)} placeholder="https://docs.example.com/" />
          <FieldError error={error} field="config" />
        </div>
      ) : null}
      <ErrorBox error={error} />
      <button type="submit" disabled={busy}>
        {busy ? 'Creating…' : 'Create source'}
      </button>
    </form>
  );
}

interface Upload {
  /** Its place in this page's list of uploads (drops and picks may overlap). */
  n: number;
  name: string;
  size: number;
  progress: number;
  state: 'queued' | 'uploading' | 'done' | 'failed';
  error?: string;
}

/** Multipart through the API up to this size; larger files go straight to S3 by a presigned PUT. */
const DIRECT_LIMIT = 4 * 1024 * 1024;

export function KnowledgeDetail({ id }: { id: string }) {
  const source = useLoad((signal) => api<Source>('GET', `/v1/knowledge-sources/${id}`, undefined, signal), [id]);
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [error, setError] = useState<unknown>();
  const [dragging, setDragging] = useState(false);
  const counted = useRef(0);
  const queue = useRef<Array<{ file: File; n: number }>>([]);
  const workers = useRef(0);
  const s = source.value;
  const uploading = uploads.some((u) => u.state === 'uploading' || u.state === 'queued');
  // Every 1.5 s while it indexes: well inside the free plan's 50 requests a minute.
  useInterval(source.reload, 1500, !!s && (BUSY.has(s.status) || uploading));

  const update = (n: number, patch: Partial<Upload>) => setUploads((list) => list.map((u) => (u.n === n ? { ...u, ...patch } : u)));

  async function uploadOne(file: File, n: number) {
    update(n, { state: 'uploading' });
    const onProgress = (p: number) => update(n, { progress: p });
    if (file.size <= DIRECT_LIMIT) {
      const form = new FormData();
      form.append('file', file, file.name);
      await uploadFiles(`/v1/knowledge-sources/${id}/files`, form, onProgress);
    } else {
      const ticket = await api<UploadTicket>('POST', `/v1/knowledge-sources/${id}/uploads`, {
        path: file.name,
        size: file.size,
        ...(file.type ? { contentType: file.type } : {}),
      });
      const put = await sendWithProgress(ticket.method, ticket.url, file, ticket.headers, onProgress);
      if (put.status >= 300) throw new Error(`The storage refused the upload (HTTP ${put.status})`);
      await api('POST', `/v1/knowledge-sources/${id}/uploads/${ticket.uploadId}/complete`);
    }
    update(n, { state: 'done', progress: 1 });
  }

  /**
   * Drops and picks join one queue, uploaded two at a time (each with its own progress; a failure
   * stops only its own file). When the queue is empty, a collection never connected is indexed;
   * a connected one already re-syncs on every change.
   */
  function add(files: File[]) {
    if (files.length === 0) return;
    setError(undefined);
    const first = counted.current;
    counted.current += files.length;
    setUploads((list) => [...list, ...files.map((f, i) => ({ n: first + i, name: f.name, size: f.size, progress: 0, state: 'queued' as const }))]);
    queue.current.push(...files.map((file, i) => ({ file, n: first + i })));
    while (workers.current < 2 && queue.current.length > 0) {
      workers.current++;
      void work();
    }
  }

  async function work() {
    for (let next = queue.current.shift(); next; next = queue.current.shift()) {
      try {
        await uploadOne(next.file, next.n);
      } catch (err) {
        update(next.n, { state: 'failed', error: err instanceof Error ? err.message : String(err) });
      }
    }
    if (--workers.current > 0) return;
    try {
      const current = await api<Source>('GET', `/v1/knowledge-sources/${id}`);
      if (current.status === 'created') await api('POST', `/v1/knowledge-sources/${id}/connect`, {});
    } catch (err) {
      setError(err);
    }
    source.reload();
  }

  async function act(method: string, path: string, body?: unknown) {
    setError(undefined);
    try {
      await api(method, path, body);
      source.reload();
    } catch (err) {
      setError(err);
    }
  }

  if (source.loading && !s) return <Loading what="the knowledge source" />;
  if (!s) return <ErrorBox error={source.error} />;
  return (
    <section>
      <div class="page-head">
        <h1>{s.name}</h1>
        <StatusBadge status={s.status} />
      </div>
      <p class="muted small">
        {s.id} · {s.type}
      </p>
      <Stats
        live
        items={[
          ['Status', s.status],
          ['Documents', s.stats?.documents ?? 0],
          ['Chunks', s.stats?.chunks ?? 0],
          ...(s.type === 'postgresql' ? [] : [['Files', `${s.fileCount ?? s.files?.length ?? 0} (${formatBytes(s.totalBytes)})`] as [string, string]]),
          ['Last synced', formatDate(s.stats?.lastSyncedAt)],
          ['Without a list', s.access === 'restricted' ? 'nobody reads' : 'everyone reads'],
        ]}
      />
      {s.type === 'postgresql' && s.config ? <TableSource config={s.config as Schemas['PostgresConfig']} /> : null}
      {s.status === 'failed' && s.error ? <ErrorBox error={new Error(typeof s.error === 'string' ? s.error : `${s.error.code ?? 'FAILED'}: ${s.error.message ?? ''}`)} /> : null}
      <ErrorBox error={error} />
      <div class="row">
        <button type="button" class="secondary" onClick={() => void act('POST', `/v1/knowledge-sources/${id}/connect`, {})} disabled={BUSY.has(s.status)}>
          {s.status === 'created' ? 'Index now' : 'Sync again'}
        </button>
        <button
          type="button"
          class="danger"
          onClick={() => {
            if (confirm(`Delete ${s.name} and its index?`)) void api('DELETE', `/v1/knowledge-sources/${id}`).then(() => navigate('/knowledge'), setError);
          }}
        >
          Delete source
        </button>
      </div>

      {s.type === 'file-collection' ? (
        <>
          <h2>Files</h2>
          <div
            class={`dropzone${dragging ? ' dragging' : ''}`}
            onDragOver={(e) => {
              e.preventDefault();
              setDragging(true);
            }}
            onDragLeave={() => setDragging(false)}
            onDrop={(e) => {
              e.preventDefault();
              setDragging(false);
              add([...(e.dataTransfer?.files ?? [])]);
            }}
          >
            <p>Drop files here (PDF, DOCX, PPTX, XLSX, Markdown, HTML, text, JSON, CSV; up to 100 MB each)</p>
            <label for="file-input" class="button secondary">
              Choose files
            </label>
            <input
              id="file-input"
              class="visually-hidden"
              type="file"
              multiple
              onChange={(e) => {
                const files = [...(e.currentTarget.files ?? [])];
                e.currentTarget.value = '';
                add(files);
              }}
            />
          </div>
          {uploads.length > 0 ? (
            <ul class="uploads" aria-label="Uploads">
              {uploads.map((u) => (
                <li key={u.n}>
                  <span>
                    {u.name} <span class="muted small">{formatBytes(u.size)}</span>
                  </span>
                  <progress max={1} value={u.progress} aria-label={`Upload of ${u.name}`} />
                  <span class={`small ${u.state === 'failed' ? 'error-text' : 'muted'}`}>{u.state === 'failed' ? u.error : u.state}</span>
                </li>
              ))}
            </ul>
          ) : null}
          {s.files && s.files.length > 0 ? (
            <Table columns={['Path', 'Size', 'Type', 'Readers', 'Problem', '']}>
              {s.files.map((f) => (
                <tr key={f.path}>
                  <td>{f.path}</td>
                  <td>{formatBytes(f.size)}</td>
                  <td>{f.contentType ?? '—'}</td>
                  <td>
                    <Readers sourceId={id} file={f} restricted={s.access === 'restricted'} ready={s.status === 'ready'} onSaved={() => source.reload()} />
                  </td>
                  <td>{f.error ? <span class="error-text">{`${f.error.code}: ${f.error.message}`}</span> : '—'}</td>
                  <td>
                    <button type="button" class="link danger" onClick={() => void act('DELETE', `/v1/knowledge-sources/${id}/files?path=${encodeURIComponent(f.path)}`)}>
                      Remove {f.path}
                    </button>
                  </td>
                </tr>
              ))}
            </Table>
          ) : (
            <p class="muted">No files yet: drop some above.</p>
          )}
        </>
      ) : null}
      <SearchBox id={id} ready={s.status === 'ready'} />
    </section>
  );
}

/** A PostgreSQL source: where its rows come from and which columns make its documents (defaults as ingestion takes them). */
function TableSource({ config }: { config: Schemas['PostgresConfig'] }) {
  const list = (columns: string[] | undefined, fallback: string) => (columns && columns.length > 0 ? columns.join(', ') : fallback);
  return (
    <>
      <h2>Table</h2>
      <dl class="facts" aria-label="Table">
        <dt>Host</dt>
        <dd>{`${config.host}:${config.port ?? 5432}`}</dd>
        <dt>Database</dt>
        <dd>{config.database}</dd>
        <dt>Table</dt>
        <dd>{config.table}</dd>
        <dt>Row key</dt>
        <dd>{config.idColumn ?? 'the primary key'}</dd>
        <dt>Text columns</dt>
        <dd>{list(config.textColumns, 'every text column')}</dd>
        <dt>Title column</dt>
        <dd>{config.titleColumn ?? 'title, name, subject… (else the start of the first text)'}</dd>
        <dt>Metadata columns</dt>
        <dd>{list(config.metadataColumns, 'none')}</dd>
        <dt>Changes since</dt>
        <dd>{config.updatedAtColumn ?? 'every sync reads every row'}</dd>
        <dt>TLS</dt>
        <dd>{config.ssl ? 'required' : 'off'}</dd>
      </dl>
    </>
  );
}

function SearchBox({ id, ready }: { id: string; ready: boolean }) {
  const [query, setQuery] = useState('');
  const [asked, setAsked] = useState('');
  const [results, setResults] = useState<SearchResult[]>();
  const [userId, setUserId] = useState('');
  const [groups, setGroups] = useState('');
  const [error, setError] = useState<unknown>();
  async function search(e: Event) {
    e.preventDefault();
    setError(undefined);
    try {
      // As an end user, to see what they may read; as nobody, what everyone may read.
      const context = userId.trim() ? { userId: userId.trim(), ...(namesOf(groups).length ? { groups: namesOf(groups) } : {}) } : undefined;
      const data = await api<Schemas['SearchResponse']>('POST', `/v1/knowledge-sources/${id}/search`, { query, topK: 10, ...(context ? { context } : {}) });
      setAsked(query);
      setResults(data.results);
    } catch (err) {
      setError(err);
    }
  }
  return (
    <>
      <h2>Search</h2>
      {!ready ? <p class="muted">Search answers once the source is ready.</p> : null}
      <form class="row" onSubmit={(e) => void search(e)} role="search">
        <label for="search-query" class="visually-hidden">
          Search this source
        </label>
        <input id="search-query" type="search" value={query} onInput={(e) => setQuery(e.currentTarget.value)} placeholder="How long do I have to return an item?" />
        <button type="submit" disabled={!query.trim()}>
          Search
        </button>
      </form>
      <div class="row small">
        <label for="search-user">As end user</label>
        <input id="search-user" value={userId} onInput={(e) => setUserId(e.currentTarget.value)} placeholder="nobody: what everyone may read" />
        <label for="search-groups">with groups</label>
        <input id="search-groups" value={groups} onInput={(e) => setGroups(e.currentTarget.value)} placeholder="finance, support" disabled={!userId.trim()} />
      </div>
      <FieldError error={error} field="query" />
      <ErrorBox error={error} />
      {results && results.length === 0 ? <p class="muted">Nothing matched “{asked}”. Try other words.</p> : null}
      {results && results.length > 0 ? (
        <ol class="results">
          {results.map((r) => (
            <li key={r.chunkId + r.documentId}>
              <div class="cite">
                <strong>{r.title ?? r.path ?? r.documentId}</strong> <span class="muted small">{citationOf(r)}</span>
                <span class="muted small"> · score {r.score.toFixed(3)}</span>
              </div>
              <p>
                <Highlighted text={r.text} query={asked} />
              </p>
            </li>
          ))}
        </ol>
      ) : null}
    </>
  );
}

/** Names typed as a comma- or space-separated list. */
const namesOf = (text: string) => text.split(/[\s,]+/).filter(Boolean);

/** Who may read one file: shown, and changed in place (no re-indexing) once the source is ready. */
function Readers({ sourceId, file, restricted, ready, onSaved }: { sourceId: string; file: KnowledgeFile; restricted: boolean; ready: boolean; onSaved: () => void }) {
  const [editing, setEditing] = useState(false);
  const [users, setUsers] = useState('');
  const [groups, setGroups] = useState('');
  const [error, setError] = useState<unknown>();
  const list = file.access;
  const shown = list ? [...(list.users ?? []).map((u) => `user ${u}`), ...(list.groups ?? []).map((g) => `group ${g}`)].join(', ') || 'nobody' : restricted ? 'nobody (no list)' : 'everyone (no list)';
  async function save(access: { users: string[]; groups: string[] } | null) {
    setError(undefined);
    try {
      await api('PUT', `/v1/knowledge-sources/${sourceId}/documents/${file.documentId}/access`, { access });
      setEditing(false);
      onSaved();
    } catch (err) {
      setError(err);
    }
  }
  if (!editing) {
    return (
      <span>
        {shown}{' '}
        {file.documentId && ready ? (
          <button
            type="button"
            class="link"
            onClick={() => {
              setUsers(list?.users?.join(', ') ?? '');
              setGroups(list?.groups?.join(', ') ?? '');
              setEditing(true);
            }}
          >
            Change readers of {file.path}
          </button>
        ) : null}
      </span>
    );
  }
  return (
    <form
      class="stack small"
      onSubmit={(e) => {
        e.preventDefault();
        void save({ users: namesOf(users), groups: namesOf(groups) });
      }}
    >
      <label for={`readers-users-${file.path}`}>Users</label>
      <input id={`readers-users-${file.path}`} value={users} onInput={(e) => setUsers(e.currentTarget.value)} placeholder="u-42, u-43" />
      <label for={`readers-groups-${file.path}`}>Groups</label>
      <input id={`readers-groups-${file.path}`} value={groups} onInput={(e) => setGroups(e.currentTarget.value)} placeholder="finance" />
      <FieldError error={error} field="access" />
      <ErrorBox error={error} />
      <div class="row">
        <button type="submit">Save readers</button>
        <button type="button" class="secondary" onClick={() => void save(null)}>
          No list ({restricted ? 'nobody' : 'everyone'})
        </button>
        <button type="button" class="link" onClick={() => setEditing(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** Where a passage comes from: the file, and its page, slide or sheet. */
export function citationOf(r: { path?: string; location?: SearchResult['location'] }): string {
  const l = r.location;
  const where = l?.page ? (l.pageEnd && l.pageEnd !== l.page ? `pages ${l.page}–${l.pageEnd}` : `page ${l.page}`) : l?.slide ? `slide ${l.slide}` : l?.sheet ? `sheet ${l.sheet}` : '';
  return [r.path, where].filter(Boolean).join(', ');
}
