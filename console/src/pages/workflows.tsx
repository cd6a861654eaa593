import { useEffect, useState } from 'preact/hooks';
import { api, apiPage, events } from '../api';
import { navigate } from '../router';
import { Empty, ErrorBox, FieldError, Loading, StatusBadge, fieldMessage, formatDate, useLoad } from '../components/ui';
import { StepGraph } from '../components/step-graph';
import type { GraphStep } from '../components/step-edges';
import { Gantt, formatMs, type TimedStep } from '../components/gantt';
import { PagedTable } from '../components/paged-table';

interface StoredStep {
  id: string;
  type: string;
  dependsOn?: string[];
  when?: { step: string; category: string };
  config?: Record<string, unknown>;
  [field: string]: unknown;
}
interface Workflow {
  id: string;
  name: string;
  description: string;
  steps: StoredStep[];
  updatedAt: string;
  version: number;
}
interface ExecutionStep extends TimedStep {
  attempt?: number;
  output?: unknown;
  error?: { code?: string; message?: string } | string;
  request?: { prompt?: string; schema?: JsonSchema; assignee?: string };
  map?: { total: number; done: number; failed: number };
}
interface Execution {
  id: string;
  workflowId: string;
  status: string;
  input: string;
  parameters: Record<string, unknown>;
  steps: ExecutionStep[];
  output?: unknown;
  error?: { code?: string; message?: string };
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
}
interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema & { description?: string; enum?: unknown[] }>;
  required?: string[];
}

const STEP_TYPES = ['classification', 'search', 'generation', 'http', 'tool', 'agent', 'transform', 'condition', 'map', 'human'];
const FINISHED = new Set(['succeeded', 'failed', 'canceled']);

export function WorkflowsList() {
  const waiting = useLoad((signal) => apiPage<Execution>('/v1/executions?status=waiting&limit=20', signal), []);
  return (
    <section>
      <div class="page-head">
        <h1>Workflows</h1>
        <a class="button" href="#/workflows/new">
          New workflow
        </a>
      </div>
      {waiting.value && waiting.value.items.length > 0 ? (
        <div class="card">
          <h2>Waiting for people</h2>
          <ul>
            {waiting.value.items.map((e) => {
              const step = e.steps.find((s) => s.status === 'waiting');
              return (
                <li key={e.id}>
                  <a href={`#/workflows/${e.workflowId}/executions/${e.id}`}>{step?.request?.prompt ?? e.id}</a>{' '}
                  <span class="muted small">
                    {step?.id} · since {formatDate(step?.startedAt)}
                  </span>
                </li>
              );
            })}
          </ul>
        </div>
      ) : null}
      <PagedTable<Workflow>
        path="/v1/workflows"
        what="workflows"
        columns={['Name', 'Steps', 'Version', 'Updated']}
        empty={
          <Empty title="No workflows yet">
            <p>A workflow chains steps — classify, search, generate, call an API, ask a person — and runs them from the API, a schedule or a hook.</p>
            <a class="button" href="#/workflows/new">
              Build your first workflow
            </a>
          </Empty>
        }
        row={(w) => (
          <tr key={w.id}>
            <td>
              <a href={`#/workflows/${w.id}`}>{w.name}</a>
              <div class="muted small">{w.id}</div>
            </td>
            <td>{w.steps.map((s) => s.type).join(' → ')}</td>
            <td>{w.version}</td>
            <td>{formatDate(w.updatedAt)}</td>
          </tr>
        )}
      />
    </section>
  );
}

interface StepDraft {
  id: string;
  type: string;
  dependsOn: string;
  /** Everything else of the step (its config, when, retry…) as JSON. */
  body: string;
  parseError?: string;
}

const DEFAULT_BODY: Record<string, Record<string, unknown>> = {
  classification: { model: 'local/lexical', categories: ['billing', 'other'] },
  search: { knowledgeSourceId: 'ks_…', query: '{{input}}' },
  generation: { model: 'gpt-4', prompt: 'Answer: {{input}}' },
  http: { method: 'GET', url: 'https://api.example.com/orders/{{parameters.orderId}}' },
  agent: { agentId: 'agt_…', message: '{{input}}' },
  transform: { expression: '$uppercase(input)' },
  condition: { expression: 'parameters.amount > 100', then: [] },
  map: { items: 'parameters.items', concurrency: 5, steps: [{ id: 'each', type: 'transform', expression: 'item' }] },
  human: { prompt: 'Approve?', schema: { type: 'object', properties: { approved: { type: 'boolean' } }, required: ['approved'] } },
  tool: { tool: { type: 'http', name: 'lookup', url: 'https://api.example.com/{{q}}' }, arguments: { q: '{{input}}' } },
};

function draftOf(step: StoredStep): StepDraft {
  const { id, type, dependsOn, config, ...rest } = step;
  return { id, type, dependsOn: (dependsOn ?? []).join(', '), body: JSON.stringify({ ...(config ?? {}), ...rest }, null, 2) };
}

function graphStepOf(d: StepDraft): GraphStep {
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(d.body) as Record<string, unknown>;
  } catch {
    /* drawn without its branches until it parses */
  }
  const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : undefined);
  return {
    id: d.id,
    type: d.type,
    ...(d.dependsOn.trim() ? { dependsOn: d.dependsOn.split(',').map((s) => s.trim()).filter(Boolean) } : {}),
    ...(body.when ? { when: body.when as GraphStep['when'] } : {}),
    then: list(body.then),
    else: list(body.else),
    inner: Array.isArray(body.steps) ? body.steps.length : undefined,
  };
}

export const graphOfExecution = (wf: Workflow | undefined, exe: Execution): GraphStep[] =>
  exe.steps.map((s) => {
    const def = wf?.steps.find((d) => d.id === s.id);
    return { ...(def ? graphStepOf(draftOf(def)) : { id: s.id, type: s.type }), status: s.status };
  });

/** A workflow: its step list (compile errors from the API at the step), its graph, runs. */
export function WorkflowDetail({ id }: { id?: string }) {
  const existing = useLoad((signal) => (id ? api<Workflow>('GET', `/v1/workflows/${id}`, undefined, signal) : Promise.resolve(undefined)), [id]);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [steps, setSteps] = useState<StepDraft[]>([draftOf({ id: 'upper', type: 'transform', config: { expression: '$uppercase(input)' } })]);
  const [error, setError] = useState<unknown>();
  const [saving, setSaving] = useState(false);
  const [saved, setSaved] = useState(false);

  useEffect(() => {
    const w = existing.value;
    if (!w) return;
    setName(w.name);
    setDescription(w.description);
    setSteps(w.steps.map(draftOf));
  }, [existing.value]);

  const change = (i: number, patch: Partial<StepDraft>) => setSteps(steps.map((s, j) => (j === i ? { ...s, ...patch } : s)));
  const move = (i: number, by: number) => {
    const next = [...steps];
    const [s] = next.splice(i, 1);
    next.splice(i + by, 0, s!);
    setSteps(next);
  };

  async function save(e: Event) {
    e.preventDefault();
    setSaved(false);
    let bad = false;
    const bodies = steps.map((s) => {
      try {
        return JSON.parse(s.body) as Record<string, unknown>;
      } catch (err) {
        bad = true;
        s.parseError = `Not JSON: ${(err as Error).message}`;
        return {};
      }
    });
    setSteps(steps.map((s) => ({ ...s, parseError: bad ? s.parseError : undefined })));
    if (bad) return;
    const body = {
      name,
      description,
      steps: steps.map((s, i) => ({
        ...bodies[i],
        ...(s.id.trim() ? { id: s.id.trim() } : {}),
        type: s.type,
        ...(s.dependsOn.trim() ? { dependsOn: s.dependsOn.split(',').map((d) => d.trim()).filter(Boolean) } : {}),
      })),
    };
    setSaving(true);
    setError(undefined);
    try {
      const wf = await api<Workflow>(id ? 'PUT' : 'POST', id ? `/v1/workflows/${id}` : '/v1/workflows', body);
      setSaved(true);
      if (!id) navigate(`/workflows/${wf.id}`);
      else existing.reload();
    } catch (err) {
      setError(err);
    } finally {
      setSaving(false);
    }
  }

  if (id && existing.loading && !existing.value) return <Loading what="the workflow" />;
  if (existing.error) return <ErrorBox error={existing.error} />;
  const stepError = (i: number) => fieldMessage(error, `steps[${i}]`);

  return (
    <section>
      <div class="page-head">
        <h1>{id ? `Workflow: ${existing.value?.name ?? id}` : 'New workflow'}</h1>
      </div>
      <div class="split">
        <form class="editor" onSubmit={(e) => void save(e)} noValidate aria-label="Workflow definition">
          <div class="field">
            <label for="wf-name">Name</label>
            <input id="wf-name" value={name} onInput={(e) => setName(e.currentTarget.value)} aria-invalid={fieldMessage(error, 'name') ? true : undefined} />
            <FieldError error={error} field="name" />
          </div>
          <div class="field">
            <label for="wf-description">Description</label>
            <input id="wf-description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
          </div>
          <h2>Steps</h2>
          <p class="muted small">
            Steps run in order unless <code>dependsOn</code> says otherwise. Templates: <code>{'{{input}}'}</code>, <code>{'{{parameters.x}}'}</code>,{' '}
            <code>{'{{steps.<id>.output}}'}</code>.
          </p>
          <ol class="steps">
            {steps.map((s, i) => (
              <li key={i} class={`step${stepError(i) || s.parseError ? ' invalid' : ''}`}>
                <div class="grid-3">
                  <div class="field">
                    <label for={`step-${i}-id`}>Step {i + 1} id</label>
                    <input id={`step-${i}-id`} value={s.id} onInput={(e) => change(i, { id: e.currentTarget.value })} placeholder={`step${i + 1}`} />
                  </div>
                  <div class="field">
                    <label for={`step-${i}-type`}>Type</label>
                    <select
                      id={`step-${i}-type`}
                      value={s.type}
                      onChange={(e) => {
                        const type = e.currentTarget.value;
                        change(i, { type, body: JSON.stringify(DEFAULT_BODY[type] ?? {}, null, 2) });
                      }}
                    >
                      {STEP_TYPES.map((t) => (
                        <option key={t} value={t}>
                          {t}
                        </option>
                      ))}
                    </select>
                  </div>
                  <div class="field">
                    <label for={`step-${i}-deps`}>Depends on</label>
                    <input id={`step-${i}-deps`} value={s.dependsOn} onInput={(e) => change(i, { dependsOn: e.currentTarget.value })} placeholder="previous step" />
                  </div>
                </div>
                <div class="field">
                  <label for={`step-${i}-body`}>Step {i + 1} settings (JSON)</label>
                  <textarea
                    id={`step-${i}-body`}
                    class="code"
                    rows={Math.min(12, s.body.split('\n').length + 1)}
                    value={s.body}
                    aria-invalid={stepError(i) || s.parseError ? true : undefined}
                    aria-describedby={`step-${i}-error`}
                    onInput={(e) => change(i, { body: e.currentTarget.value })}
                  />
                  {s.parseError ? (
                    <p class="field-error" role="alert">
                      {s.parseError}
                    </p>
                  ) : null}
                  <FieldError error={error} field={`steps[${i}]`} id={`step-${i}-error`} />
                </div>
                <div class="row">
                  <button type="button" class="link" disabled={i === 0} onClick={() => move(i, -1)}>
                    Move step {i + 1} up
                  </button>
                  <button type="button" class="link" disabled={i === steps.length - 1} onClick={() => move(i, 1)}>
                    Move step {i + 1} down
                  </button>
                  <button type="button" class="link danger" onClick={() => setSteps(steps.filter((_, j) => j !== i))}>
                    Remove step {i + 1}
                  </button>
                </div>
              </li>
            ))}
          </ol>
          <button
            type="button"
            class="secondary"
            onClick={() => setSteps([...steps, { id: `step${steps.length + 1}`, type: 'transform', dependsOn: '', body: JSON.stringify(DEFAULT_BODY.transform, null, 2) }])}
          >
            Add a step
          </button>
          <FieldError error={error} field="steps" exact />
          <ErrorBox error={error} />
          {saved ? (
            <p class="notice" role="status">
              Saved: the workflow compiled.
            </p>
          ) : null}
          <div class="row">
            <button type="submit" disabled={saving}>
              {saving ? 'Compiling…' : id ? 'Save changes' : 'Create workflow'}
            </button>
          </div>
        </form>
        <div>
          <h2>Graph</h2>
          <StepGraph steps={steps.map(graphStepOf)} title="Workflow steps" />
        </div>
      </div>
      {id ? <Runs workflowId={id} /> : null}
    </section>
  );
}

function Runs({ workflowId }: { workflowId: string }) {
  const [input, setInput] = useState('');
  const [parameters, setParameters] = useState('{}');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const runs = useLoad((signal) => apiPage<Execution>(`/v1/workflows/${workflowId}/executions?limit=10`, signal), [workflowId]);

  async function run(e: Event) {
    e.preventDefault();
    setError(undefined);
    let params: unknown;
    try {
      params = JSON.parse(parameters || '{}');
    } catch (err) {
      return setError(new Error(`Parameters are not JSON: ${(err as Error).message}`));
    }
    setBusy(true);
    try {
      const exe = await api<Execution>('POST', `/v1/workflows/${workflowId}/execute`, { input, parameters: params, mode: 'async' });
      navigate(`/workflows/${workflowId}/executions/${exe.id}`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <div class="split">
      <form class="card editor" onSubmit={(e) => void run(e)} aria-label="Run the workflow">
        <h2>Run</h2>
        <div class="field">
          <label for="run-input">Input</label>
          <textarea id="run-input" rows={2} value={input} onInput={(e) => setInput(e.currentTarget.value)} />
          <FieldError error={error} field="input" />
        </div>
        <div class="field">
          <label for="run-parameters">Parameters (JSON)</label>
          <textarea id="run-parameters" class="code" rows={3} value={parameters} onInput={(e) => setParameters(e.currentTarget.value)} />
          <FieldError error={error} field="parameters" />
        </div>
        <ErrorBox error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Starting…' : 'Run workflow'}
        </button>
      </form>
      <div>
        <h2>Recent executions</h2>
        {runs.value?.items.length === 0 ? <p class="muted">Not run yet.</p> : null}
        <ul class="plain">
          {runs.value?.items.map((x) => (
            <li key={x.id}>
              <a href={`#/workflows/${workflowId}/executions/${x.id}`}>{x.id}</a> <StatusBadge status={x.status} />{' '}
              <span class="muted small">{formatDate(x.createdAt)}</span>
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}

/** One execution, followed live: its graph, timeline, steps' outputs, and waiting human steps. */
export function ExecutionPage({ workflowId, executionId }: { workflowId: string; executionId: string }) {
  const path = `/v1/workflows/${workflowId}/executions/${executionId}`;
  const workflow = useLoad((signal) => api<Workflow>('GET', `/v1/workflows/${workflowId}`, undefined, signal), [workflowId]);
  const [exe, setExe] = useState<Execution>();
  const [error, setError] = useState<unknown>();
  const [now, setNow] = useState(Date.now());
  const [tick, setTick] = useState(0);

  useEffect(() => {
    const controller = new AbortController();
    const refresh = () => api<Execution>('GET', path, undefined, controller.signal).then(setExe, (err: unknown) => !controller.signal.aborted && setError(err));
    // The stream's snapshot is the execution; step events move it along (times by this clock until
    // the record, read again when the execution waits or ends, gives the exact ones).
    void (async () => {
      try {
        for await (const e of events('GET', `${path}/events`, undefined, controller.signal)) {
          if (e.event === 'snapshot') setExe(e.data as Execution);
          else if (e.event.startsWith('step.')) setExe((x) => (x ? applyStepEvent(x, e.event, e.data as StepEvent) : x));
          else if (e.event === 'execution.waiting' || e.event === 'execution.finished') await refresh();
          if (e.event === 'execution.finished') break;
        }
      } catch (err) {
        if (!controller.signal.aborted) setError(err);
      }
    })();
    return () => controller.abort();
  }, [path, tick]);

  const running = exe && !FINISHED.has(exe.status);
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, [running]);

  async function cancel() {
    try {
      await api('POST', `${path}/cancel`);
      setTick((t) => t + 1);
    } catch (err) {
      setError(err);
    }
  }

  if (!exe) return error ? <ErrorBox error={error} /> : <Loading what="the execution" />;
  const end = exe.finishedAt ? Date.parse(exe.finishedAt) : now;
  return (
    <section>
      <div class="page-head">
        <h1>
          Execution <span class="mono">{exe.id}</span>
        </h1>
        <StatusBadge status={exe.status} />
      </div>
      <p class="muted">
        <a href={`#/workflows/${workflowId}`}>{workflow.value?.name ?? workflowId}</a> · started {formatDate(exe.startedAt ?? exe.createdAt)} ·{' '}
        {formatMs(end - Date.parse(exe.startedAt ?? exe.createdAt))}
        {running ? (
          <>
            {' '}
            ·{' '}
            <button type="button" class="link danger" onClick={() => void cancel()}>
              Cancel execution
            </button>
          </>
        ) : null}
      </p>
      <ErrorBox error={error} />
      {exe.error ? <ErrorBox error={new Error(`${exe.error.code ?? 'FAILED'}: ${exe.error.message ?? ''}`)} /> : null}
      {exe.steps
        .filter((s) => s.status === 'waiting' && s.type === 'human')
        .map((s) => (
          <HumanStep key={s.id} step={s} path={path} onDone={() => setTick((t) => t + 1)} />
        ))}
      <div class="split">
        <div>
          <h2>Timeline</h2>
          <Gantt steps={exe.steps} startedAt={exe.startedAt ?? exe.createdAt} now={end} />
        </div>
        <div>
          <h2>Graph</h2>
          <StepGraph steps={graphOfExecution(workflow.value, exe)} title="Execution steps" />
        </div>
      </div>
      <h2>Steps</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">Step</th>
            <th scope="col">Status</th>
            <th scope="col">Duration</th>
            <th scope="col">Attempts</th>
            <th scope="col">Output or error</th>
          </tr>
        </thead>
        <tbody>
          {exe.steps.map((s) => (
            <tr key={s.id}>
              <td>
                {s.id} <span class="muted small">{s.type}</span>
              </td>
              <td>
                <StatusBadge status={s.status} />
                {s.map ? <span class="muted small"> {`${s.map.done}/${s.map.total}`}</span> : null}
              </td>
              <td>{s.durationMs !== undefined ? formatMs(s.durationMs) : '—'}</td>
              <td>{s.attempt ?? 0}</td>
              <td>
                {s.error ? (
                  <span class="error-text">{typeof s.error === 'string' ? s.error : `${s.error.code ?? ''} ${s.error.message ?? ''}`}</span>
                ) : s.output !== undefined ? (
                  <pre class="output">{typeof s.output === 'string' ? s.output : JSON.stringify(s.output, null, 2)}</pre>
                ) : (
                  '—'
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {exe.output !== undefined ? (
        <>
          <h2>Output</h2>
          <pre class="output">{typeof exe.output === 'string' ? exe.output : JSON.stringify(exe.output, null, 2)}</pre>
        </>
      ) : null}
    </section>
  );
}

interface StepEvent {
  stepId: string;
  status?: string;
  attempt?: number;
  output?: unknown;
  durationMs?: number;
  error?: ExecutionStep['error'];
  request?: ExecutionStep['request'];
  total?: number;
  done?: number;
  failed?: number;
}

function applyStepEvent(exe: Execution, event: string, e: StepEvent): Execution {
  const at = new Date().toISOString();
  return {
    ...exe,
    status: event === 'step.started' && exe.status !== 'running' ? 'running' : exe.status,
    steps: exe.steps.map((s) => {
      if (s.id !== e.stepId) return s;
      if (event === 'step.progress') return { ...s, map: { total: e.total ?? 0, done: e.done ?? 0, failed: e.failed ?? 0 } };
      const next: ExecutionStep = { ...s, status: e.status ?? s.status, attempt: e.attempt ?? s.attempt };
      if (event === 'step.started' && !s.startedAt) next.startedAt = at;
      if (e.output !== undefined) next.output = e.output;
      if (e.durationMs !== undefined) next.durationMs = e.durationMs;
      if (e.error) next.error = e.error;
      if (e.request) next.request = e.request;
      if (event === 'step.succeeded' || event === 'step.failed' || event === 'step.skipped') next.finishedAt = at;
      return next;
    }),
  };
}

/** A waiting human step: its prompt and a form built from its schema (JSON for anything deeper). */
function HumanStep({ step, path, onDone }: { step: ExecutionStep; path: string; onDone: () => void }) {
  const schema = step.request?.schema;
  const props = schema?.type === 'object' && schema.properties ? Object.entries(schema.properties) : undefined;
  const simple = props?.every(([, p]) => ['boolean', 'string', 'number', 'integer'].includes(p.type ?? ''));
  // Booleans start unchecked (false), so "no" is an answer too.
  const [values, setValues] = useState<Record<string, unknown>>(() => Object.fromEntries((props ?? []).filter(([, p]) => p.type === 'boolean').map(([n]) => [n, false])));
  const [json, setJson] = useState('{}');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  async function submit(e: Event) {
    e.preventDefault();
    setError(undefined);
    let input: unknown = values;
    if (!simple) {
      try {
        input = JSON.parse(json);
      } catch (err) {
        return setError(new Error(`Not JSON: ${(err as Error).message}`));
      }
    }
    setBusy(true);
    try {
      await api('POST', `${path}/steps/${step.id}/complete`, { input });
      onDone();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="card human" onSubmit={(e) => void submit(e)} aria-label={`Complete step ${step.id}`}>
      <h2>Waiting for a person: {step.id}</h2>
      <p class="prompt">{step.request?.prompt ?? 'This step waits for input.'}</p>
      {step.request?.assignee ? <p class="muted small">Assigned to {step.request.assignee}</p> : null}
      {simple && props
        ? props.map(([name, p]) => {
            const fieldId = `human-${step.id}-${name}`;
            const required = schema?.required?.includes(name);
            if (p.type === 'boolean') {
              return (
                <label key={name} class="check">
                  <input id={fieldId} type="checkbox" checked={values[name] === true} onChange={(e) => setValues({ ...values, [name]: e.currentTarget.checked })} /> {name}
                  {required ? ' (required)' : ''}
                </label>
              );
            }
            return (
              <div class="field" key={name}>
                <label for={fieldId}>
                  {name}
                  {required ? ' (required)' : ''}
                </label>
                <input
                  id={fieldId}
                  inputMode={p.type === 'string' ? undefined : 'decimal'}
                  onInput={(e) => {
                    const raw = e.currentTarget.value;
                    const next = { ...values };
                    if (raw === '') delete next[name];
                    else next[name] = p.type === 'string' ? raw : Number(raw);
                    setValues(next);
                  }}
                />
              </div>
            );
          })
        : (
          <div class="field">
            <label for={`human-${step.id}-json`}>Input (JSON)</label>
            <textarea id={`human-${step.id}-json`} class="code" rows={4} value={json} onInput={(e) => setJson(e.currentTarget.value)} />
          </div>
        )}
      <FieldError error={error} field="input" />
      <ErrorBox error={error} />
      <button type="submit" disabled={busy}>
        {busy ? 'Sending…' : `Complete ${step.id}`}
      </button>
    </form>
  );
}
