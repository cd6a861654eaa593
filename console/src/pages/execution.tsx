import { useEffect, useState } from 'preact/hooks';
import { api, events } from '../api';
import { navigate } from '../router';
import { ErrorBox, FieldError, Loading, StatusBadge, Table, formatDate, useInterval, useAction, useLoad } from '../components/ui';
import { jsonOf } from '../json-input';
import { StepGraph } from '../components/step-graph';
import { Gantt, formatMs } from '../components/gantt';
import { FINISHED, graphOfExecution, type Execution, type ExecutionStep, type Workflow } from '../workflow-model';
import { isFlat, SchemaFields, type JsonSchema } from '../components/schema-fields';

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
  useInterval(() => setNow(Date.now()), 250, !!running);

  /** A new execution from this step: the steps before it keep their outputs. */
  async function rerun(stepId: string) {
    try {
      const next = await api<Execution>('POST', `${path}/rerun`, { fromStep: stepId });
      navigate(`/workflows/${workflowId}/executions/${next.id}`);
    } catch (err) {
      setError(err);
    }
  }

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
        <a href={`#/workflows/${workflowId}`}>{workflow.value?.name ?? workflowId}</a> · started {formatDate(exe.startedAt)} ·{' '}
        {formatMs(end - Date.parse(exe.startedAt))}
        {exe.rerunOf ? (
          <>
            {' '}
            · re-runs <a href={`#/workflows/${workflowId}/executions/${exe.rerunOf.executionId}`}>{exe.rerunOf.executionId}</a> from {exe.rerunOf.fromStep}
          </>
        ) : null}
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
          <Gantt steps={exe.steps} startedAt={exe.startedAt} now={end} />
        </div>
        <div>
          <h2>Graph</h2>
          <StepGraph steps={graphOfExecution(workflow.value, exe)} title="Execution steps" />
        </div>
      </div>
      <h2>Steps</h2>
      <Table columns={['Step', 'Status', 'Duration', 'Attempts', 'Output or error', '']}>
        {exe.steps.map((s) => (
          <tr key={s.id}>
            <td>
              {s.id} <span class="muted small">{s.type}</span>
            </td>
            <td>
              <StatusBadge status={s.status} />
              {s.map ? <span class="muted small"> {`${s.map.done}/${s.map.total}`}</span> : null}
              {s.reused ? <span class="muted small"> reused</span> : null}
              {s.run ? (
                <div class="small">
                  <a href={`#/agents/${s.run.agentId}/runs/${s.run.runId}`}>its run</a>
                </div>
              ) : null}
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
              {s.logs?.length ? (
                <details class="small">
                  <summary>Logs ({s.logs.length} lines)</summary>
                  <pre class="output">{s.logs.join('\n')}</pre>
                </details>
              ) : null}
            </td>
            <td>
              {running ? null : (
                <button type="button" class="link" onClick={() => void rerun(s.id)}>
                  Re-run from {s.id}
                </button>
              )}
            </td>
          </tr>
        ))}
      </Table>
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
  started?: number;
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
      if (event === 'step.progress') return { ...s, map: { total: e.total ?? 0, started: e.started ?? s.map?.started ?? 0, done: e.done ?? 0, failed: e.failed ?? 0 } };
      const next: ExecutionStep = { ...s, status: e.status ?? s.status, attempt: e.attempt ?? s.attempt };
      if (event === 'step.started' && !s.startedAt) next.startedAt = at;
      if (e.output !== undefined) next.output = e.output;
      if (e.durationMs !== undefined) next.durationMs = e.durationMs;
      if (e.error) next.error = e.error;
      if (e.request) next.request = e.request;
      if (event === 'step.succeeded' || event === 'step.failed' || event === 'step.skipped' || event === 'step.canceled') next.finishedAt = at;
      return next;
    }),
  };
}

/** A waiting human step: its prompt and a form built from its schema (JSON for anything deeper). */
function HumanStep({ step, path, onDone }: { step: ExecutionStep; path: string; onDone: () => void }) {
  const schema = step.request?.schema as JsonSchema | undefined;
  const simple = schema?.type === 'object' && isFlat(schema);
  // Booleans start unchecked (false), so "no" is an answer too.
  const [values, setValues] = useState<Record<string, unknown>>(() => Object.fromEntries(Object.entries(schema?.properties ?? {}).filter(([, p]) => p.type === 'boolean').map(([n]) => [n, false])));
  const [json, setJson] = useState('{}');
  const { busy, error, setError, run } = useAction();

  function submit(e: Event) {
    e.preventDefault();
    const typed = simple ? { value: values } : jsonOf(json);
    if ('reason' in typed) return setError(new Error(`Not JSON: ${typed.reason}`));
    void run(async () => {
      await api('POST', `${path}/steps/${step.id}/complete`, { input: typed.value });
      onDone();
    });
  }

  return (
    <form class="card human" onSubmit={submit} aria-label={`Complete step ${step.id}`}>
      <h2>Waiting for a person: {step.id}</h2>
      <p class="prompt">{step.request?.prompt ?? 'This step waits for input.'}</p>
      {step.request?.assignee ? <p class="muted small">Assigned to {step.request.assignee}</p> : null}
      {simple && schema ? (
        <SchemaFields schema={schema} value={values} idPrefix={`human-${step.id}`} onChange={setValues} />
      ) : (
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
