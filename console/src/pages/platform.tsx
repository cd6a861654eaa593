import { useState } from 'preact/hooks';
import { api } from '../api';
import { jsonOf } from '../json-input';
import { MemoryGraph, type MemoryEdge, type MemoryNode } from '../components/memory-graph';
import { Empty, ErrorBox, FieldError, Loading, Table, formatDate, useLoad } from '../components/ui';
import type { PlatformSchemas } from '../contract';

type Catalogue = PlatformSchemas['TableCatalogue'];

/** The tenant's logical tables through /platform/db/ops: browse, filter, page. */
export function TablesPage() {
  const catalogue = useLoad((signal) => api<Catalogue>('GET', '/platform/db/ops', undefined, signal), []);
  const [table, setTable] = useState('agents');
  const [where, setWhere] = useState('{}');
  const [rows, setRows] = useState<Array<Record<string, unknown>>>();
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const info = catalogue.value?.tables.find((t) => t.name === table);

  async function query(e: Event | undefined, after?: string) {
    e?.preventDefault();
    setError(undefined);
    const condition = jsonOf(where || '{}');
    if ('reason' in condition) return setError(new Error(`Where is not JSON: ${condition.reason}`));
    setBusy(true);
    try {
      const data = await api<{ items: Array<Record<string, unknown>>; nextCursor?: string | null }>('POST', '/platform/db/ops', {
        operation: 'query',
        table,
        where: condition.value,
        limit: 25,
        ...(after ? { cursor: after } : {}),
      });
      setRows(after ? [...(rows ?? []), ...data.items] : data.items);
      setCursor(data.nextCursor ?? null);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  if (catalogue.loading && !catalogue.value) return <Loading what="tables" />;
  if (catalogue.error) return <ErrorBox error={catalogue.error} />;
  const columns = rows && rows.length > 0 ? [...new Set(rows.flatMap((r) => Object.keys(r)))].slice(0, 8) : [];
  return (
    <section>
      <div class="page-head">
        <h1>Tables</h1>
      </div>
      <form class="card editor" onSubmit={(e) => void query(e)}>
        <div class="grid-2">
          <div class="field">
            <label for="db-table">Table</label>
            <select
              id="db-table"
              value={table}
              onChange={(e) => {
                setTable(e.currentTarget.value);
                setRows(undefined);
              }}
            >
              {catalogue.value?.tables.map((t) => (
                <option key={t.name} value={t.name}>
                  {t.name}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="db-where">Where (JSON)</label>
            <input id="db-where" class="code" value={where} onInput={(e) => setWhere(e.currentTarget.value)} placeholder='{"collection": "orders"}' />
            <FieldError error={error} field="where" />
          </div>
        </div>
        {info ? (
          <p class="muted small">
            {info.description} Partition: {info.partition}. Fields: {info.fields.map((f) => f.name).join(', ')}.
          </p>
        ) : null}
        <ErrorBox error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Querying…' : 'Query'}
        </button>
      </form>
      {rows && rows.length === 0 ? <Empty title={`No rows in ${table} match`}>{info?.partition.startsWith('none') ? null : <p>This table is read one partition at a time: {info?.partition}.</p>}</Empty> : null}
      {rows && rows.length > 0 ? (
        <>
          <div class="scroll">
            <Table columns={columns}>
              {rows.map((r, i) => (
                <tr key={i}>
                  {columns.map((c) => (
                    <td key={c}>{cell(r[c])}</td>
                  ))}
                </tr>
              ))}
            </Table>
          </div>
          {cursor ? (
            <button type="button" class="secondary" onClick={() => void query(undefined, cursor)}>
              Load more
            </button>
          ) : null}
        </>
      ) : null}
    </section>
  );
}

function cell(v: unknown): string {
  if (v === undefined || v === null) return '—';
  if (typeof v === 'string') return /^\d{4}-\d\d-\d\dT/.test(v) ? formatDate(v) : v.length > 80 ? `${v.slice(0, 79)}…` : v;
  const text = JSON.stringify(v);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** The memory graph of one user of one agent (/platform/memory/query), drawn. */
export function MemoryPage() {
  const agents = useLoad((signal) => api<Array<PlatformSchemas['Agent']>>('GET', '/platform/agent', undefined, signal), []);
  const [agentId, setAgentId] = useState('');
  const [userId, setUserId] = useState('');
  const [text, setText] = useState('');
  const [graph, setGraph] = useState<{ nodes: MemoryNode[]; edges: MemoryEdge[]; episodes: Array<{ id: string; text: string; at: string }> }>();
  const [error, setError] = useState<unknown>();
  const chosen = agentId || agents.value?.[0]?.id || '';

  async function load(e: Event) {
    e.preventDefault();
    setError(undefined);
    try {
      setGraph(await api('POST', '/platform/memory/query', { agentId: chosen, userId, ...(text.trim() ? { query: text } : {}), depth: 2, limit: 50 }));
    } catch (err) {
      setError(err);
    }
  }

  return (
    <section>
      <div class="page-head">
        <h1>Memory graph</h1>
      </div>
      <form class="card editor" onSubmit={(e) => void load(e)}>
        <div class="grid-3">
          <div class="field">
            <label for="memory-agent">Agent</label>
            <select id="memory-agent" value={chosen} onChange={(e) => setAgentId(e.currentTarget.value)}>
              {agents.value?.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.name}
                </option>
              ))}
            </select>
            <FieldError error={error} field="agentId" />
          </div>
          <div class="field">
            <label for="memory-user">User id</label>
            <input id="memory-user" value={userId} onInput={(e) => setUserId(e.currentTarget.value)} placeholder="context.userId of the conversations" />
            <FieldError error={error} field="userId" />
          </div>
          <div class="field">
            <label for="memory-query">About (optional)</label>
            <input id="memory-query" value={text} onInput={(e) => setText(e.currentTarget.value)} placeholder="shipping preference" />
          </div>
        </div>
        <ErrorBox error={error} />
        <button type="submit" disabled={!chosen || !userId.trim()}>
          Draw memory
        </button>
      </form>
      {agents.value?.length === 0 ? <Empty title="No agents in this tenant">Converse with an agent, passing context.userId, and what it learns about the user shows here.</Empty> : null}
      {graph && graph.nodes.length === 0 ? <Empty title="Nothing remembered about this user yet">Memory grows from converse turns that pass context.userId.</Empty> : null}
      {graph && graph.nodes.length > 0 ? (
        <>
          <MemoryGraph nodes={graph.nodes} edges={graph.edges} />
          <h2>Facts</h2>
          <ul>
            {graph.edges.map((e) => (
              <li key={e.id} class={e.invalidAt ? 'muted' : undefined}>
                {e.fact ?? e.relation}
                {e.invalidAt ? ` (no longer true since ${formatDate(e.invalidAt)})` : ''}
              </li>
            ))}
          </ul>
          <h2>Episodes</h2>
          <ul>
            {graph.episodes.map((ep) => (
              <li key={ep.id}>
                <span class="muted small">{formatDate(ep.at)}</span> {ep.text}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}
