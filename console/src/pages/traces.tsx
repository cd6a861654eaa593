import { useState } from 'preact/hooks';
import { api, apiAll } from '../api';
import { ErrorBox, Loading, useLoad } from '../components/ui';
import { TraceTree } from '../components/trace-tree';
import { navigate } from '../router';
import type { Agent, Trace } from '../contract';

/** One request's trace (its X-Request-Id): the spans as a tree, the agents that took part named. */
export function TracePage({ requestId }: { requestId?: string }) {
  const [draft, setDraft] = useState(requestId ?? '');
  const trace = useLoad((signal) => (requestId ? api<Trace>('GET', `/v1/traces/${requestId}`, undefined, signal) : Promise.resolve(undefined)), [requestId]);
  const agents = useLoad(() => apiAll<Agent>('/v1/agents'), []);
  const names = Object.fromEntries((agents.value ?? []).map((a) => [a.id, a.name]));
  return (
    <section>
      <div class="page-head">
        <h1>Trace{requestId ? ` ${requestId}` : ''}</h1>
      </div>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          if (draft.trim()) navigate(`/traces/${draft.trim()}`);
        }}
      >
        <label for="trace-request">Request id (a response’s X-Request-Id)</label>
        <input id="trace-request" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} placeholder="req_…" />
        <button type="submit">Show</button>
      </form>
      {requestId && trace.loading && !trace.value ? <Loading what="the trace" /> : null}
      <ErrorBox error={trace.error} />
      {trace.value ? <TraceTree trace={trace.value} agentNames={names} /> : null}
    </section>
  );
}
