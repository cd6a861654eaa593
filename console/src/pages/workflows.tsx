import { useEffect, useState } from 'preact/hooks';
import { api, apiPage, ifMatch } from '../api';
import { navigate } from '../router';
import { Empty, ErrorBox, FieldError, Loading, StatusBadge, fieldMessage, formatDate, useAction, useLoad } from '../components/ui';
import { StepSettings } from '../components/step-settings';
import { StepGraph } from '../components/step-graph';
import { dependsOnOf, draftOf, graphStepOf, type Execution, type StepDraft, type Workflow } from '../workflow-model';
import { checkDrafts, jsonOf } from '../json-input';
import { PagedTable } from '../components/paged-table';

const STEP_TYPES = ['classification', 'search', 'generation', 'http', 'tool', 'agent', 'transform', 'code', 'condition', 'map', 'human'];

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

const DEFAULT_BODY: Record<string, Record<string, unknown>> = {
  classification: { model: 'local/lexical', categories: ['billing', 'other'] },
  search: { knowledgeSourceId: 'ks_…', query: '{{input}}' },
  generation: { model: 'gpt-4', prompt: 'Answer: {{input}}' },
  http: { method: 'GET', url: 'https://api.example.com/orders/{{parameters.orderId}}' },
  agent: { agentId: 'agt_…', message: '{{input}}' },
  transform: { expression: '$uppercase(input)' },
  code: { source: 'export default function main({ input, parameters, steps }) {\n  return { length: input.length };\n}' },
  condition: { expression: 'parameters.amount > 100', then: [] },
  map: { items: 'parameters.items', concurrency: 5, steps: [{ id: 'each', type: 'transform', expression: 'item' }] },
  human: { prompt: 'Approve?', schema: { type: 'object', properties: { approved: { type: 'boolean' } }, required: ['approved'] } },
  tool: { tool: { type: 'http', name: 'lookup', url: 'https://api.example.com/{{q}}' }, arguments: { q: '{{input}}' } },
};

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
    const checked = checkDrafts(steps, (s) => s.body);
    setSteps(checked.drafts);
    const bodies = checked.values;
    if (!bodies) return;
    const body = {
      name,
      description,
      steps: steps.map((s, i) => {
        const dependsOn = dependsOnOf(s);
        return { ...(bodies[i] as object), ...(s.id.trim() ? { id: s.id.trim() } : {}), type: s.type, ...(dependsOn ? { dependsOn } : {}) };
      }),
    };
    setSaving(true);
    setError(undefined);
    try {
      const wf = await api<Workflow>(id ? 'PUT' : 'POST', id ? `/v1/workflows/${id}` : '/v1/workflows', body, undefined, id ? ifMatch(existing.value) : undefined);
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
        {id ? (
          <a class="button secondary" href={`#/workflows/${id}/releases`}>
            Versions and aliases
          </a>
        ) : null}
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
                <StepSettings draft={s} index={i} invalid={!!(stepError(i) || s.parseError)} describedBy={`step-${i}-error`} onBody={(body) => change(i, { body })} />
                <div class="field">
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
  const { busy, error, setError, run: act } = useAction();
  const runs = useLoad((signal) => apiPage<Execution>(`/v1/workflows/${workflowId}/executions?limit=10`, signal), [workflowId]);

  function run(e: Event) {
    e.preventDefault();
    const params = jsonOf(parameters || '{}');
    if ('reason' in params) return setError(new Error(`Parameters are not JSON: ${params.reason}`));
    void act(async () => {
      const exe = await api<Execution>('POST', `/v1/workflows/${workflowId}/execute`, { input, parameters: params.value, mode: 'async' });
      navigate(`/workflows/${workflowId}/executions/${exe.id}`);
    });
  }

  return (
    <div class="split">
      <form class="card editor" onSubmit={run} aria-label="Run the workflow">
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
              <span class="muted small">{formatDate(x.startedAt)}</span>
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}
