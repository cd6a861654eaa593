import { useEffect, useState } from 'preact/hooks';
import { api, events } from '../api';
import { navigate } from '../router';
import { Empty, ErrorBox, FieldError, Loading, StatusBadge, Table, formatDate, useAction, useLoad } from '../components/ui';
import { PagedTable } from '../components/paged-table';
import { formatMs } from '../components/gantt';
import { Approvals, ConnectAccounts } from './chat';
import type { Agent, Run, RunStep } from '../contract';

const ENDED = new Set(['completed', 'failed', 'cancelled', 'expired']);

/** An agent's background runs, newest first, and a form to start one. */
export function RunsPage({ agentId }: { agentId: string }) {
  const agent = useLoad((signal) => api<Agent>('GET', `/v1/agents/${agentId}`, undefined, signal), [agentId]);
  const [message, setMessage] = useState('');
  const [maxToolSteps, setMaxToolSteps] = useState('20');
  const { busy, error, run: act } = useAction();

  function start(e: Event) {
    e.preventDefault();
    void act(async () => {
      const run = await api<Run>('POST', `/v1/agents/${agentId}/runs`, { message, maxToolSteps: Number(maxToolSteps) });
      navigate(`/agents/${agentId}/runs/${run.id}`);
    });
  }

  return (
    <section>
      <div class="page-head">
        <h1>Background runs: {agent.value?.name ?? agentId}</h1>
        <a class="button secondary" href={`#/agents/${agentId}`}>
          Back to the agent
        </a>
      </div>
      <form class="card" onSubmit={start} aria-label="Start a run" noValidate>
        <div class="field">
          <label for="run-message">Job for the agent</label>
          <textarea id="run-message" rows={2} value={message} onInput={(e) => setMessage(e.currentTarget.value)} placeholder="Reconcile the open orders" />
          <FieldError error={error} field="message" />
        </div>
        <div class="field">
          <label for="run-steps">Rounds of tool calls at most</label>
          <input id="run-steps" type="number" min={1} max={100} value={maxToolSteps} onInput={(e) => setMaxToolSteps(e.currentTarget.value)} />
          <FieldError error={error} field="maxToolSteps" />
        </div>
        <ErrorBox error={error} />
        <button type="submit" disabled={busy || !message.trim()}>
          {busy ? 'Starting…' : 'Start run'}
        </button>
      </form>
      <PagedTable<Run>
        path={`/v1/agents/${agentId}/runs`}
        what="runs"
        columns={['Run', 'Status', 'Job', 'Steps', 'Started']}
        pollWhile={(items) => items.some((r) => !ENDED.has(r.status))}
        empty={
          <Empty title="No runs yet">
            <p>A run is a turn taken a step at a time through the queue: it can take many tool rounds and minutes, and outlives any one request.</p>
          </Empty>
        }
        row={(r) => (
          <tr key={r.id}>
            <td>
              <a href={`#/agents/${agentId}/runs/${r.id}`} class="mono">
                {r.id}
              </a>
            </td>
            <td>
              <StatusBadge status={r.status} />
            </td>
            <td>{r.message}</td>
            <td>{r.step}</td>
            <td>{formatDate(r.createdAt)}</td>
          </tr>
        )}
      />
    </section>
  );
}

/** One run, followed live: its steps as they are recorded, the reply as it comes, approvals, cancel and re-run. */
export function RunPage({ agentId, runId }: { agentId: string; runId: string }) {
  const path = `/v1/agents/${agentId}/runs/${runId}`;
  const [run, setRun] = useState<Run>();
  const [steps, setSteps] = useState<RunStep[]>([]);
  const [live, setLive] = useState('');
  const [error, setError] = useState<unknown>();
  const [tick, setTick] = useState(0);

  useEffect(() => {
    const controller = new AbortController();
    const refresh = async (withSteps: boolean) => {
      const current = await api<Run>('GET', path, undefined, controller.signal);
      setRun(current);
      if (withSteps) setSteps(current.steps ?? []);
      return current;
    };
    void (async () => {
      try {
        if (ENDED.has((await refresh(true)).status)) return;
        // The stream replays the run's events from the first: the steps are drawn from it as they come.
        setSteps([]);
        setLive('');
        for await (const e of events('GET', `${path}/events`, undefined, controller.signal)) {
          const data = e.data as Record<string, unknown>;
          const delta = e.event === 'delta' && typeof data.text === 'string' ? data.text : undefined;
          if (e.event === 'step') setSteps((list) => [...list, data as unknown as RunStep]);
          else if (delta !== undefined) setLive((text) => text + delta);
          else if (e.event === 'status' || e.event === 'requires_action' || e.event === 'done') {
            // A run found ended has all its steps in its record: they replace what the replay drew so far.
            if (ENDED.has((await refresh(false)).status) || e.event === 'done') {
              await refresh(true);
              break;
            }
          }
        }
      } catch (err) {
        if (!controller.signal.aborted) setError(err);
      }
    })();
    return () => controller.abort();
  }, [path, tick]);

  async function act(method: string, suffix: string, body?: unknown) {
    setError(undefined);
    try {
      const next = await api<Run>(method, `${path}${suffix}`, body);
      return next;
    } catch (err) {
      setError(err);
      return undefined;
    }
  }

  if (!run) return error ? <ErrorBox error={error} /> : <Loading what="the run" />;
  const ended = ENDED.has(run.status);
  return (
    <section>
      <div class="page-head">
        <h1>
          Run <span class="mono">{run.id}</span>
        </h1>
        <StatusBadge status={run.status} />
      </div>
      <p class="muted">
        <a href={`#/agents/${agentId}/runs`}>All runs</a> · <a href={`#/chat/${agentId}/${run.sessionId}`}>Its session in chat</a> · started {formatDate(run.createdAt)} · step {run.step} of at most {run.maxToolSteps} ·{' '}
        {run.usage.inputTokens + run.usage.outputTokens} tokens
        {run.rerunOf ? (
          <>
            {' '}
            · re-runs <a href={`#/agents/${agentId}/runs/${run.rerunOf.runId}`}>{run.rerunOf.runId}</a> from step {run.rerunOf.fromStep}
          </>
        ) : null}
        {!ended ? (
          <>
            {' '}
            ·{' '}
            <button type="button" class="link danger" onClick={() => void act('POST', '/cancel').then(() => setTick((t) => t + 1))}>
              Cancel run
            </button>
          </>
        ) : null}
      </p>
      <p>
        <strong>Job:</strong> {run.message}
      </p>
      <ErrorBox error={error} />
      {run.error ? <ErrorBox error={new Error(`${run.error.code}: ${run.error.message}`)} /> : null}
      {run.status === 'requires_action' && run.requiredActions?.length ? (
        <ConnectAccounts actions={run.requiredActions} />
      ) : run.status === 'requires_action' && run.pendingToolCalls?.length ? (
        <Approvals calls={run.pendingToolCalls} onDecide={(decisions) => void act('POST', '/approvals', { toolApprovals: decisions }).then(() => setTick((t) => t + 1))} />
      ) : null}
      {run.reply !== undefined || live ? (
        <>
          <h2>Reply</h2>
          <div class="bubble">
            <p>{run.reply ?? live}</p>
          </div>
        </>
      ) : null}
      <h2>Steps</h2>
      {steps.length === 0 ? <p class="muted">No step recorded yet.</p> : null}
      {steps.length > 0 ? (
        <Table columns={['Step', 'What', 'Details', 'Time', '']}>
          {steps.map((s, i) => (
            <tr key={`${s.step}-${s.kind}-${s.id ?? i}`}>
              <td>
                {s.step} {s.reused ? <span class="muted small">reused</span> : null}
              </td>
              <td>{s.kind === 'model' ? `model ${s.model ?? ''}` : <code>{s.tool}</code>}</td>
              <td>
                {s.kind === 'tool' ? (
                  <>
                    <pre>{JSON.stringify(s.arguments ?? {}, null, 2)}</pre>
                    {s.error ? <p class="error-text">{s.error}</p> : <pre class="tool-result">{s.result}</pre>}
                  </>
                ) : s.usage ? (
                  <span class="muted small">
                    {s.usage.inputTokens} in, {s.usage.outputTokens} out
                  </span>
                ) : null}
              </td>
              <td>{formatMs(s.durationMs)}</td>
              <td>
                {ended && s.kind === 'model' ? (
                  <button
                    type="button"
                    class="link"
                    onClick={() => void act('POST', '/rerun', { fromStep: s.step }).then((next) => next && navigate(`/agents/${agentId}/runs/${next.id}`))}
                  >
                    Re-run from step {s.step}
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </Table>
      ) : null}
    </section>
  );
}
