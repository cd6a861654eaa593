import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { PagedTable } from '../components/paged-table';
import { Empty, ErrorBox, FieldError, Table, formatDate, useLoad } from '../components/ui';
import type { Alias, VersionDiff } from '../contract';

/** A version as the list shows it: agents' and workflows' differ only in what they snapshot. */
interface Version {
  version: number;
  description: string;
  createdAt: string;
}

/** What a diff compares: a version with another, or with the draft. */
type Comparison = { from: number; against: number | 'draft' };

/**
 * An agent's or workflow's releases: publish the draft, list versions, see what changed (the API's
 * RFC 6902 patch), and route an alias between two versions with a slider (all to one: a roll back).
 */
export function ReleasesPage({ kind, id }: { kind: 'agents' | 'workflows'; id: string }) {
  const base = `/v1/${kind}/${id}`;
  const resource = useLoad((signal) => api<{ name: string }>('GET', base, undefined, signal), [base]);
  const aliases = useLoad((signal) => api<Alias[]>('GET', `${base}/aliases`, undefined, signal), [base]);
  const [listed, setListed] = useState(0);
  const [comparison, setComparison] = useState<Comparison>();
  const [error, setError] = useState<unknown>();
  const [description, setDescription] = useState('');
  const [publishing, setPublishing] = useState(false);
  const [notice, setNotice] = useState<string>();

  async function publish(e: Event) {
    e.preventDefault();
    setPublishing(true);
    setError(undefined);
    try {
      const v = await api<Version>('POST', `${base}/versions`, { description });
      setNotice(`Published version ${v.version}.`);
      setDescription('');
      setListed((n) => n + 1);
    } catch (err) {
      setError(err);
    } finally {
      setPublishing(false);
    }
  }

  const noun = kind === 'agents' ? 'agent' : 'workflow';
  return (
    <section>
      <div class="page-head">
        <h1>Releases: {resource.value?.name ?? id}</h1>
        <a class="button secondary" href={`#/${kind}/${id}`}>
          Edit the draft
        </a>
      </div>
      <p class="muted">
        What you edit is the draft. Publishing snapshots it as a numbered version that never changes; an alias routes new{' '}
        {kind === 'agents' ? 'sessions' : 'executions'} to versions by weight.
      </p>
      <form class="row" onSubmit={(e) => void publish(e)} noValidate>
        <label for="publish-description">Description</label>
        <input id="publish-description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} placeholder="What changed" />
        <button type="submit" disabled={publishing}>
          {publishing ? 'Publishing…' : 'Publish the draft'}
        </button>
      </form>
      <ErrorBox error={error} />
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      <h2>Versions</h2>
      <PagedTable<Version>
        key={listed}
        path={`${base}/versions`}
        what="versions"
        columns={['Version', 'Description', 'Published', '']}
        empty={
          <Empty title="No versions yet">
            <p>Publish the draft to make version 1; an alias can then route to it.</p>
          </Empty>
        }
        row={(v) => (
          <tr key={v.version}>
            <td>{v.version}</td>
            <td>{v.description || <span class="muted">—</span>}</td>
            <td>{formatDate(v.createdAt)}</td>
            <td>
              <button type="button" class="link" onClick={() => setComparison({ from: v.version, against: 'draft' })}>
                Diff v{v.version} with the draft
              </button>
              {v.version > 1 ? (
                <button type="button" class="link" onClick={() => setComparison({ from: v.version - 1, against: v.version })}>
                  What v{v.version} changed
                </button>
              ) : null}
            </td>
          </tr>
        )}
      />
      {comparison ? <DiffView base={base} comparison={comparison} /> : null}
      <h2>Aliases</h2>
      <ErrorBox error={aliases.error} />
      {aliases.value && aliases.value.length === 0 ? <p class="muted">No aliases yet: name one below to route {noun} traffic to versions.</p> : null}
      {aliases.value && aliases.value.length > 0 ? (
        <Table columns={['Alias', 'Routing', 'Updated']}>
          {aliases.value.map((a) => (
            <tr key={a.name}>
              <td>{a.name}</td>
              <td>{a.routing.map((r) => `v${r.version} ${r.weight}%`).join(' · ')}</td>
              <td>{formatDate(a.updatedAt)}</td>
            </tr>
          ))}
        </Table>
      ) : null}
      <AliasEditor base={base} aliases={aliases.value ?? []} onSaved={aliases.reload} />
    </section>
  );
}

function DiffView({ base, comparison }: { base: string; comparison: Comparison }) {
  const diff = useLoad((signal) => api<VersionDiff>('GET', `${base}/versions/${comparison.from}/diff?against=${comparison.against}`, undefined, signal), [base, comparison.from, comparison.against]);
  const title = `Changes from v${comparison.from} to ${comparison.against === 'draft' ? 'the draft' : `v${comparison.against}`}`;
  return (
    <div class="diff" aria-live="polite">
      <h3>{title}</h3>
      <ErrorBox error={diff.error} />
      {diff.value && diff.value.changes.length === 0 ? <p class="muted">No changes.</p> : null}
      {diff.value && diff.value.changes.length > 0 ? (
        <Table columns={['Change', 'Field', 'Value']}>
          {diff.value.changes.map((c, i) => (
            <tr key={i} class={`diff-${c.op}`}>
              <td>{c.op}</td>
              <td>
                <code>{c.path}</code>
              </td>
              <td>
                <code>{c.op === 'remove' ? '' : JSON.stringify(c.value)}</code>
              </td>
            </tr>
          ))}
        </Table>
      ) : null}
    </div>
  );
}

/** An alias between two versions: the slider gives the first one's share, the second takes the rest. */
function AliasEditor({ base, aliases, onSaved }: { base: string; aliases: Alias[]; onSaved: () => void }) {
  const [name, setName] = useState('live');
  const [first, setFirst] = useState('');
  const [second, setSecond] = useState('');
  const [weight, setWeight] = useState(100);
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState<string>();

  // Editing an existing alias starts from its routing.
  useEffect(() => {
    const current = aliases.find((a) => a.name === name);
    if (!current) return;
    setFirst(String(current.routing[0]?.version ?? ''));
    setSecond(current.routing[1] ? String(current.routing[1].version) : '');
    setWeight(current.routing[0]?.weight ?? 100);
  }, [name, aliases]);

  async function save(e: Event) {
    e.preventDefault();
    setSaved(undefined);
    setError(undefined);
    const split = second !== '' && weight < 100;
    const routing = [{ version: Number(first), weight: split ? weight : 100 }, ...(split ? [{ version: Number(second), weight: 100 - weight }] : [])];
    try {
      await api('PUT', `${base}/aliases/${encodeURIComponent(name)}`, { routing });
      setSaved(`Alias ${name} routes ${routing.map((r) => `${r.weight}% to v${r.version}`).join(' and ')}.`);
      onSaved();
    } catch (err) {
      setError(err);
    }
  }

  return (
    <form class="editor alias-editor" onSubmit={(e) => void save(e)} noValidate>
      <h3>Route an alias</h3>
      <div class="grid-3">
        <div class="field">
          <label for="alias-name">Alias</label>
          <input id="alias-name" value={name} list="alias-names" onInput={(e) => setName(e.currentTarget.value)} />
          <datalist id="alias-names">
            {aliases.map((a) => (
              <option key={a.name} value={a.name} />
            ))}
          </datalist>
        </div>
        <div class="field">
          <label for="alias-first">Version</label>
          <input id="alias-first" inputMode="numeric" value={first} onInput={(e) => setFirst(e.currentTarget.value)} />
          <FieldError error={error} field="routing[0]" />
        </div>
        <div class="field">
          <label for="alias-second">Second version (optional)</label>
          <input id="alias-second" inputMode="numeric" value={second} onInput={(e) => setSecond(e.currentTarget.value)} />
          <FieldError error={error} field="routing[1]" />
        </div>
      </div>
      <div class="field">
        <label for="alias-weight">
          Share of v{first || '?'}: {weight}%{second ? `, v${second}: ${100 - weight}%` : ''}
        </label>
        <input id="alias-weight" type="range" min={0} max={100} step={1} value={weight} disabled={!second} onInput={(e) => setWeight(Number(e.currentTarget.value))} />
      </div>
      <ErrorBox error={error} />
      {saved ? (
        <p class="notice" role="status">
          {saved}
        </p>
      ) : null}
      <div class="row">
        <button type="submit">Save alias</button>
        <button type="button" class="secondary" onClick={() => setWeight(100)} disabled={!second}>
          All to v{first || '?'} (roll back)
        </button>
      </div>
    </form>
  );
}
