import type { Trace } from '../contract';

type Span = Trace['spans'][number];

/**
 * A request's spans as a tree: each under the span that started it, with the agent whose turn it
 * belongs to — so a turn that asked other agents shows each agent's model and tool calls nested
 * under the tool call that asked it.
 */
export function TraceTree({ trace, agentNames = {} }: { trace: Trace; agentNames?: Record<string, string> }) {
  const ids = new Set(trace.spans.map((s) => s.spanId));
  const children = new Map<string | undefined, Span[]>();
  for (const s of trace.spans) {
    const parent = s.parentSpanId && ids.has(s.parentSpanId) ? s.parentSpanId : undefined;
    children.set(parent, [...(children.get(parent) ?? []), s]);
  }
  const agentOf = (s: Span) => (typeof s.attributes['cairn.agent.id'] === 'string' ? s.attributes['cairn.agent.id'] : undefined);
  const node = (s: Span, parentAgent: string | undefined): preact.JSX.Element => {
    const agent = agentOf(s);
    const kids = children.get(s.spanId) ?? [];
    return (
      <li key={s.spanId}>
        <span class={s.status === 'error' ? 'error-text' : undefined}>
          {s.name} — {Math.round(s.durationMs)} ms{s.status === 'error' ? ' (error)' : ''}
        </span>
        {agent && agent !== parentAgent ? <span class="badge">agent {agentNames[agent] ?? agent}</span> : null}
        {kids.length > 0 ? <ul class="span-tree">{kids.map((k) => node(k, agent ?? parentAgent))}</ul> : null}
      </li>
    );
  };
  return (
    <ul class="span-tree" aria-label="Spans">
      {(children.get(undefined) ?? []).map((s) => node(s, undefined))}
    </ul>
  );
}
