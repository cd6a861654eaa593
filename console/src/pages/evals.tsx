import { useState } from 'preact/hooks';
import { api, apiAll } from '../api';
import { TraceTree } from '../components/trace-tree';
import { PagedTable } from '../components/paged-table';
import { Empty, ErrorBox, FieldError, Loading, Stats, StatusBadge, Table, formatDate, useInterval, useLoad } from '../components/ui';
import type { Agent, EvalCase, EvalDataset, EvalResult, EvalRun, Trace, Workflow } from '../contract';
import { navigate } from '../router';

/**
 * Evaluations: datasets and their cases, runs with their scores, a case's output beside what it
 * expected and its trace, and two runs side by side. What the API's scorers are is the API's:
 * the console lists them as the run form's choices.
 */
const SCORERS = ['exact', 'f1', 'contains', 'regex', 'citations', 'tool_calls', 'json_schema', 'refusal', 'latency', 'cost', 'llm_judge'] as const;
const RUNNING = new Set(['queued', 'running']);

const score = (n: number | null | undefined) => (n === null || n === undefined ? '—' : n.toFixed(3));
const inputText = (input: unknown) => (typeof input === 'string' ? input : Array.isArray(input) ? String((input as Array<{ role: string; content: string }>).filter((m) => m.role === 'user').at(-1)?.content ?? '') : JSON.stringify(input));
const targetText = (t: EvalRun['target']) => `${t.agentId ?? t.workflowId ?? '?'}${t.alias ? `:${t.alias}` : t.version ? `:${t.version}` : ''}`;

/** Cases pasted as JSON Lines: each line parsed here, a bad one named by its line number. */
function casesOfText(text: string): { cases: unknown[]; lines: number[] } {
  const cases: unknown[] = [];
  const lines: number[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      cases.push(JSON.parse(line));
      lines.push(i + 1);
    } catch {
      throw new Error(`Line ${i + 1} is not JSON: one case a line, e.g. {"input": "…", "expected": {"answer": "…"}}`);
    }
  });
  return { cases, lines };
}

/** Pasted cases sent by `post`: a line that is not JSON, or a case the API refuses (`cases[i]`), is named by its pasted line. */
async function postCases<T>(text: string, post: (cases: unknown[]) => Promise<T>): Promise<T> {
  const { cases, lines } = casesOfText(text);
  try {
    return await post(cases);
  } catch (error) {
    throw lineOf(error, lines);
  }
}

/** The API names `cases[i]`: the console says which pasted line that was. */
function lineOf(error: unknown, lines: number[]): unknown {
  const field = (error as { details?: { field?: string } })?.details?.field;
  const index = field ? /^cases\[(\d+)\]/.exec(field)?.[1] : undefined;
  if (index === undefined || lines[Number(index)] === undefined) return error;
  return Object.assign(new Error(`Line ${lines[Number(index)]}: ${(error as Error).message}`), { details: (error as { details?: unknown }).details });
}

export function EvalsPage() {
  const [name, setName] = useState('');
  const [text, setText] = useState('');
  const [error, setError] = useState<unknown>();
  const [picked, setPicked] = useState<string[]>([]);

  async function create(e: Event) {
    e.preventDefault();
    setError(undefined);
    try {
      const made = await postCases(text, (cases) => api<EvalDataset>('POST', '/v1/eval-datasets', { name, cases }));
      navigate(`/evals/datasets/${made.id}`);
    } catch (err) {
      setError(err);
    }
  }
  const pick = (id: string, on: boolean) => setPicked((p) => (on ? [...p.filter((x) => x !== id), id].slice(-2) : p.filter((x) => x !== id)));

  return (
    <section>
      <div class="page-head">
        <h1>Evaluations</h1>
      </div>
      <p class="muted">A dataset holds cases — a question and what a good reply does. A run scores an agent or a workflow on every case; compare two runs to see what a change did.</p>
      <h2>Datasets</h2>
      <PagedTable<EvalDataset>
        path="/v1/eval-datasets"
        what="datasets"
        columns={['Name', 'Cases', 'Created']}
        empty={
          <Empty title="No datasets yet">
            <p>Make one below from JSON Lines, or turn rated replies into cases from the API.</p>
          </Empty>
        }
        row={(d) => (
          <tr key={d.id}>
            <td>
              <a href={`#/evals/datasets/${d.id}`}>{d.name}</a>
            </td>
            <td>{d.caseCount}</td>
            <td>{formatDate(d.createdAt)}</td>
          </tr>
        )}
      />
      <form class="stack" onSubmit={(e) => void create(e)} noValidate>
        <h3>New dataset</h3>
        <label for="dataset-name">Name</label>
        <input id="dataset-name" value={name} onInput={(e) => setName(e.currentTarget.value)} required />
        <FieldError error={error} field="name" />
        <label for="dataset-cases">Cases (JSON Lines, one a line; may be empty)</label>
        <textarea id="dataset-cases" rows={5} value={text} onInput={(e) => setText(e.currentTarget.value)} placeholder='{"input": "How long do I have to return an item?", "expected": {"answer": "30 days"}}' />
        <ErrorBox error={error} />
        <button type="submit">Create dataset</button>
      </form>
      <h2>Runs</h2>
      <p class="muted">Tick two runs to compare them.</p>
      <PagedTable<EvalRun>
        path="/v1/eval-runs"
        what="runs"
        columns={['', 'Run', 'Target', 'Status', 'Passed', 'Started']}
        pollWhile={(runs) => runs.some((r) => RUNNING.has(r.status))}
        empty={<p class="muted">No runs yet: open a dataset to run it.</p>}
        row={(r) => (
          <tr key={r.id}>
            <td>
              <input type="checkbox" aria-label={`Compare ${r.id}`} checked={picked.includes(r.id)} onChange={(e) => pick(r.id, e.currentTarget.checked)} />
            </td>
            <td>
              <a href={`#/evals/runs/${r.id}`}>{r.id}</a>
            </td>
            <td>{targetText(r.target)}</td>
            <td>
              <StatusBadge status={r.status} /> {r.progress.done}/{r.progress.total}
            </td>
            <td>{r.summary ? (r.summary.passed ? 'yes' : 'no') : '—'}</td>
            <td>{formatDate(r.createdAt)}</td>
          </tr>
        )}
      />
      {picked.length === 2 ? (
        <a class="button" href={`#/evals/compare/${picked[0]}/${picked[1]}`}>
          Compare the two runs
        </a>
      ) : null}
    </section>
  );
}

/** A dataset: its cases, more added, and a run started on it. */
export function EvalDatasetPage({ id }: { id: string }) {
  const dataset = useLoad((signal) => api<EvalDataset>('GET', `/v1/eval-datasets/${id}`, undefined, signal), [id]);
  const [added, setAdded] = useState(0);
  const [text, setText] = useState('');
  const [error, setError] = useState<unknown>();

  async function add(e: Event) {
    e.preventDefault();
    setError(undefined);
    try {
      await postCases(text, (cases) => api('POST', `/v1/eval-datasets/${id}/cases`, { cases }));
      setText('');
      setAdded((n) => n + 1);
      dataset.reload();
    } catch (err) {
      setError(err);
    }
  }
  return (
    <section>
      <div class="page-head">
        <h1>Dataset: {dataset.value?.name ?? id}</h1>
        <a class="button secondary" href="#/evals">
          All evaluations
        </a>
      </div>
      <ErrorBox error={dataset.error} />
      {dataset.value ? <p class="muted">{dataset.value.caseCount} cases. {dataset.value.description}</p> : null}
      <RunForm datasetId={id} />
      <h2>Cases</h2>
      <PagedTable<EvalCase>
        key={added}
        path={`/v1/eval-datasets/${id}/cases`}
        what="cases"
        columns={['#', 'Input', 'Expected']}
        empty={<p class="muted">No cases yet: add some below.</p>}
        row={(c) => (
          <tr key={c.id}>
            <td>{c.position}</td>
            <td>{inputText(c.input)}</td>
            <td>
              <code>{c.expected ? JSON.stringify(c.expected) : '—'}</code>
            </td>
          </tr>
        )}
      />
      <form class="stack" onSubmit={(e) => void add(e)} noValidate>
        <label for="more-cases">Add cases (JSON Lines)</label>
        <textarea id="more-cases" rows={4} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        <ErrorBox error={error} />
        <button type="submit">Add cases</button>
      </form>
    </section>
  );
}

/** Starts a run of the dataset: the target, its release, the scorers and their thresholds. */
function RunForm({ datasetId }: { datasetId: string }) {
  const targets = useLoad(async () => ({ agents: await apiAll<Agent>('/v1/agents'), workflows: await apiAll<Workflow>('/v1/workflows') }), []);
  const [target, setTarget] = useState('');
  const [release, setRelease] = useState('');
  const [scorers, setScorers] = useState<string[]>(['f1', 'contains', 'citations']);
  const [thresholds, setThresholds] = useState<Record<string, string>>({});
  const [compareTo, setCompareTo] = useState('');
  const [error, setError] = useState<unknown>();

  async function start(e: Event) {
    e.preventDefault();
    setError(undefined);
    const [kind, targetId] = target.split(':') as ['agent' | 'workflow', string];
    const releaseOf = release.trim() === '' ? {} : /^\d+$/.test(release.trim()) ? { version: Number(release.trim()) } : { alias: release.trim() };
    const limits = Object.fromEntries(Object.entries(thresholds).flatMap(([s, v]) => (scorers.includes(s) && v.trim() !== '' ? [[s, Number(v)]] : [])));
    try {
      const run = await api<EvalRun>('POST', '/v1/eval-runs', {
        datasetId,
        target: { [kind === 'workflow' ? 'workflowId' : 'agentId']: targetId, ...releaseOf },
        scorers,
        thresholds: limits,
        ...(compareTo.trim() ? { compareTo: compareTo.trim() } : {}),
      });
      navigate(`/evals/runs/${run.id}`);
    } catch (err) {
      setError(err);
    }
  }
  return (
    <form class="stack" onSubmit={(e) => void start(e)} noValidate>
      <h2>Run it</h2>
      <label for="run-target">Target</label>
      <select id="run-target" value={target} onChange={(e) => setTarget(e.currentTarget.value)}>
        <option value="">Choose an agent or a workflow</option>
        {(targets.value?.agents ?? []).map((a) => (
          <option key={a.id} value={`agent:${a.id}`}>
            Agent: {a.name}
          </option>
        ))}
        {(targets.value?.workflows ?? []).map((w) => (
          <option key={w.id} value={`workflow:${w.id}`}>
            Workflow: {w.name}
          </option>
        ))}
      </select>
      <FieldError error={error} field="target" />
      <label for="run-release">Version or alias (empty: the draft)</label>
      <input id="run-release" value={release} onInput={(e) => setRelease(e.currentTarget.value)} placeholder="3, or live" />
      <fieldset>
        <legend>Scorers and thresholds (the least mean each must reach)</legend>
        {SCORERS.map((s) => (
          <div class="row" key={s}>
            <input type="checkbox" id={`scorer-${s}`} checked={scorers.includes(s)} onChange={(e) => setScorers((list) => (e.currentTarget.checked ? [...list, s] : list.filter((x) => x !== s)))} />
            <label for={`scorer-${s}`}>{s}</label>
            <input aria-label={`Threshold for ${s}`} type="number" min="0" max="1" step="0.05" value={thresholds[s] ?? ''} disabled={!scorers.includes(s)} onInput={(e) => setThresholds((t) => ({ ...t, [s]: e.currentTarget.value }))} />
          </div>
        ))}
      </fieldset>
      <FieldError error={error} field="scorers" />
      <label for="run-compare">Compare to run (optional)</label>
      <input id="run-compare" value={compareTo} onInput={(e) => setCompareTo(e.currentTarget.value)} placeholder="evr_…" />
      <ErrorBox error={error} />
      <button type="submit" disabled={!target}>
        Start the run
      </button>
    </form>
  );
}

/** A run: progress while it runs, then its scores against their thresholds, and every case. */
export function EvalRunPage({ id }: { id: string }) {
  const run = useLoad((signal) => api<EvalRun>('GET', `/v1/eval-runs/${id}`, undefined, signal), [id]);
  const running = !!run.value && RUNNING.has(run.value.status);
  useInterval(run.reload, 2000, running);
  const [open, setOpen] = useState<EvalResult>();
  const r = run.value;
  return (
    <section>
      <div class="page-head">
        <h1>Run {id}</h1>
        <a class="button secondary" href="#/evals">
          All evaluations
        </a>
      </div>
      <ErrorBox error={run.error} />
      {run.loading && !r ? <Loading what="the run" /> : null}
      {r ? (
        <>
          <p>
            <StatusBadge status={r.status} /> {targetText(r.target)} on <a href={`#/evals/datasets/${r.datasetId}`}>{r.datasetId}</a>
            {r.compareTo ? (
              <>
                {' '}
                · <a href={`#/evals/compare/${r.compareTo}/${r.id}`}>compared with {r.compareTo}</a>
              </>
            ) : null}
          </p>
          <Stats
            live={running}
            items={[
              ['Cases done', `${r.progress.done}/${r.progress.total}`],
              ['Passed', r.summary ? (r.summary.passed ? 'yes' : 'no') : '—'],
              ['Cases passed', r.summary ? `${r.summary.casesPassed}/${r.summary.cases}` : '—'],
              ['Latency p50 / p95', r.summary ? `${Math.round(r.summary.latencyMs.p50)} / ${Math.round(r.summary.latencyMs.p95)} ms` : '—'],
              ['Cost', r.summary ? (r.summary.usage.costUsd === null ? 'no price' : `$${r.summary.usage.costUsd.toFixed(4)}`) : '—'],
            ]}
          />
          {r.summary ? (
            <Table columns={['Scorer', 'Mean', 'Cases scored', 'Threshold', '']}>
              {r.scorers.map((s) => {
                const min = r.thresholds[s];
                const mean = r.summary!.scores[s] ?? null;
                return (
                  <tr key={s}>
                    <td>{s}</td>
                    <td>{score(mean)}</td>
                    <td>{r.summary!.scored[s] ?? 0}</td>
                    <td>{min === undefined ? '—' : `≥ ${min}`}</td>
                    <td>{min === undefined ? '' : mean !== null && mean >= min ? 'met' : 'missed'}</td>
                  </tr>
                );
              })}
            </Table>
          ) : null}
          {r.summary && r.compareTo ? (
            <p>
              {r.summary.regressions.length} regressions, {r.summary.improvements.length} improvements against {r.compareTo}.
            </p>
          ) : null}
          <h2>Cases</h2>
          <PagedTable<EvalResult>
            key={r.progress.done}
            path={`/v1/eval-runs/${id}/results`}
            what="results"
            columns={['#', 'Input', 'Output', 'Scores', 'Passed', '']}
            empty={<p class="muted">{running ? 'No case has finished yet.' : 'No results.'}</p>}
            row={(c) => (
              <tr key={c.caseId} class={r.summary?.regressions.includes(c.caseId) ? 'regressed' : undefined}>
                <td>{c.position}</td>
                <td>{inputText(c.input)}</td>
                <td>{c.error ? <span class="error-text">{c.error}</span> : c.output.slice(0, 160)}</td>
                <td>
                  {Object.entries(c.scores)
                    .map(([s, v]) => `${s} ${score(v)}`)
                    .join(', ')}
                </td>
                <td>{c.passed ? 'yes' : 'no'}</td>
                <td>
                  <button type="button" class="link" onClick={() => setOpen(c)}>
                    Case {c.position} in detail
                  </button>
                </td>
              </tr>
            )}
          />
          {open ? <CaseDetail result={open} /> : null}
        </>
      ) : null}
    </section>
  );
}

/** A case's output beside what it expected, why a scorer passed over it, and its trace. */
function CaseDetail({ result }: { result: EvalResult }) {
  const trace = useLoad((signal) => api<Trace>('GET', `/v1/traces/${result.requestId}`, undefined, signal), [result.requestId]);
  return (
    <div class="case-detail" aria-label={`Case ${result.position}`}>
      <h3>Case {result.position}</h3>
      <div class="split">
        <div>
          <h4>Output</h4>
          <pre>{result.error ?? result.output}</pre>
        </div>
        <div>
          <h4>Expected</h4>
          <pre>{result.expected ? JSON.stringify(result.expected, null, 2) : 'Nothing: only scorers that need no expectation (latency, cost, llm_judge) score it.'}</pre>
        </div>
      </div>
      {result.skipped ? (
        <ul>
          {Object.entries(result.skipped).map(([s, why]) => (
            <li key={s}>
              {s} did not score it: {why}
            </li>
          ))}
        </ul>
      ) : null}
      {result.judge?.reasoning ? <p>Judge ({result.judge.model}): {result.judge.reasoning}</p> : null}
      <h4>Trace {result.requestId}</h4>
      <ErrorBox error={trace.error} />
      {trace.value ? <TraceTree trace={trace.value} /> : null}
    </div>
  );
}

/** Two runs side by side: each scorer's mean, and every case that went one way or the other. */
export function EvalComparePage({ a, b }: { a: string; b: string }) {
  const data = useLoad(async (signal) => {
    const [left, right] = await Promise.all([api<EvalRun>('GET', `/v1/eval-runs/${a}`, undefined, signal), api<EvalRun>('GET', `/v1/eval-runs/${b}`, undefined, signal)]);
    const [leftResults, rightResults] = await Promise.all([apiAll<EvalResult>(`/v1/eval-runs/${a}/results`, 2000), apiAll<EvalResult>(`/v1/eval-runs/${b}/results`, 2000)]);
    return { left, right, leftResults, rightResults };
  }, [a, b]);
  const v = data.value;
  const scorers = v ? [...new Set([...v.left.scorers, ...v.right.scorers])] : [];
  const byCase = new Map((v?.rightResults ?? []).map((r) => [r.caseId, r]));
  const changed = (v?.leftResults ?? []).flatMap((l) => {
    const r = byCase.get(l.caseId);
    return r && r.passed !== l.passed ? [{ l, r }] : [];
  });
  return (
    <section>
      <div class="page-head">
        <h1>Two runs side by side</h1>
        <a class="button secondary" href="#/evals">
          All evaluations
        </a>
      </div>
      <ErrorBox error={data.error} />
      {data.loading && !v ? <Loading what="the runs" /> : null}
      {v ? (
        <>
          {v.left.datasetId !== v.right.datasetId ? <p class="notice">These runs are of different datasets: only cases of both are compared.</p> : null}
          <Table columns={['', a, b, 'Change']}>
            <tr>
              <th scope="row">Target</th>
              <td>{targetText(v.left.target)}</td>
              <td>{targetText(v.right.target)}</td>
              <td />
            </tr>
            <tr>
              <th scope="row">Passed</th>
              <td>{v.left.summary ? (v.left.summary.passed ? 'yes' : 'no') : v.left.status}</td>
              <td>{v.right.summary ? (v.right.summary.passed ? 'yes' : 'no') : v.right.status}</td>
              <td />
            </tr>
            {scorers.map((s) => {
              const l = v.left.summary?.scores[s] ?? null;
              const r = v.right.summary?.scores[s] ?? null;
              return (
                <tr key={s}>
                  <th scope="row">{s}</th>
                  <td>{score(l)}</td>
                  <td>{score(r)}</td>
                  <td>{l !== null && r !== null ? `${r - l >= 0 ? '+' : ''}${(r - l).toFixed(3)}` : '—'}</td>
                </tr>
              );
            })}
          </Table>
          <h2>Cases that changed ({changed.length})</h2>
          {changed.length === 0 ? <p class="muted">Every case passed or failed in both alike.</p> : null}
          {changed.length > 0 ? (
            <Table columns={['#', 'Input', `Output in ${a}`, `Output in ${b}`, 'Change']}>
              {changed.map(({ l, r }) => (
                <tr key={l.caseId} class={l.passed ? 'regressed' : 'improved'}>
                  <td>{l.position}</td>
                  <td>{inputText(l.input)}</td>
                  <td>{l.error ?? l.output.slice(0, 200)}</td>
                  <td>{r.error ?? r.output.slice(0, 200)}</td>
                  <td>{l.passed ? 'regressed' : 'improved'}</td>
                </tr>
              ))}
            </Table>
          ) : null}
        </>
      ) : null}
    </section>
  );
}
