import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, apiAll, apiPage, events } from '../api';
import { navigate } from '../router';
import { Empty, ErrorBox, Loading, formatDate, useLoad } from '../components/ui';
import { citationOf } from './knowledge';
import type { Agent, ConverseResponse, ForkedSession, Schemas, SessionMessage, SessionSummary } from '../contract';

type Source = NonNullable<SessionMessage['sources']>[number];
type ToolCall = Schemas['ToolCall'];
type PendingCall = NonNullable<ConverseResponse['pendingToolCalls']>[number];
type RequiredAction = Schemas['RequiredAction'];
/** A message as the API keeps it, while the console shows it (streaming, or waiting for approvals or for accounts to be connected). */
type Message = Pick<SessionMessage, 'id' | 'role' | 'content' | 'sources' | 'toolCalls' | 'model' | 'agentId' | 'handoffs'> & { pending?: PendingCall[]; actions?: RequiredAction[]; streaming?: boolean };

/** The chat playground: streaming replies, citations, tool calls, approvals, session history. */
export function ChatPage({ agentId, sessionId }: { agentId?: string; sessionId?: string }) {
  const agents = useLoad(() => apiAll<Agent>('/v1/agents'), []);
  const chosen = agentId ?? agents.value?.[0]?.id;
  useEffect(() => {
    if (!agentId && chosen) navigate(`/chat/${chosen}`);
  }, [agentId, chosen]);

  if (agents.loading && !agents.value) return <Loading what="agents" />;
  if (agents.error) return <ErrorBox error={agents.error} />;
  if (!agents.value?.length) {
    return (
      <section>
        <h1>Chat</h1>
        <Empty title="No agent to talk to">
          <p>Create an agent first; it answers here, citing its knowledge and calling its tools.</p>
          <a class="button" href="#/agents/new">
            Create an agent
          </a>
        </Empty>
      </section>
    );
  }
  return (
    <section class="chat-page">
      <div class="page-head">
        <h1>Chat</h1>
        <label for="chat-agent" class="visually-hidden">
          Agent
        </label>
        <select id="chat-agent" value={chosen} onChange={(e) => navigate(`/chat/${e.currentTarget.value}`)}>
          {agents.value.map((a) => (
            <option key={a.id} value={a.id}>
              {a.name} ({a.model})
            </option>
          ))}
        </select>
      </div>
      {chosen ? <Conversation key={chosen} agentId={chosen} sessionId={sessionId} /> : null}
    </section>
  );
}

function Conversation({ agentId, sessionId }: { agentId: string; sessionId?: string }) {
  const sessions = useLoad((signal) => apiPage<SessionSummary>(`/v1/agents/${agentId}/sessions?limit=30`, signal), [agentId]);
  const [messages, setMessages] = useState<Message[]>([]);
  const [error, setError] = useState<unknown>();
  const [draft, setDraft] = useState('');
  // Who the conversation acts for (context.userId): their memory, the documents they may read, their connected accounts.
  const [endUser, setEndUser] = useState('');
  const [busy, setBusy] = useState(false);
  const [open, setOpen] = useState<Source>();
  // The session this view holds: a reply that starts a session moves the address without a reload.
  const held = useRef<string | undefined>(undefined);
  const log = useRef<HTMLDivElement>(null);
  // The turn streaming now: another conversation, or leaving the page, stops it from drawing here.
  const streaming = useRef<AbortController | undefined>(undefined);
  useEffect(() => () => streaming.current?.abort(), []);

  useEffect(() => {
    if (sessionId === held.current) return;
    streaming.current?.abort();
    held.current = sessionId;
    setMessages([]);
    setError(undefined);
    if (!sessionId) return;
    apiAll<Message>(`/v1/agents/${agentId}/sessions/${sessionId}/messages`, 1000).then(setMessages, setError);
  }, [agentId, sessionId]);

  useEffect(() => {
    log.current?.scrollTo({ top: log.current.scrollHeight });
  }, [messages]);

  /** Runs one turn as server-sent events, building the assistant's message as they arrive. */
  async function turn(body: Record<string, unknown>) {
    setBusy(true);
    setError(undefined);
    const live: Message = { id: `live-${Date.now()}`, role: 'assistant', content: '', toolCalls: [], streaming: true };
    const stop = new AbortController();
    streaming.current = stop;
    const show = () => {
      if (!stop.signal.aborted) setMessages((list) => [...list.filter((m) => m.id !== live.id), { ...live, toolCalls: [...(live.toolCalls ?? [])] }]);
    };
    show();
    try {
      const request = { ...body, stream: true, context: { ...(held.current ? { sessionId: held.current } : {}), ...(endUser.trim() ? { userId: endUser.trim() } : {}) } };
      for await (const e of events('POST', `/v1/agents/${agentId}/converse`, request, stop.signal)) {
        const data = e.data as Record<string, unknown>;
        if (e.event === 'start') {
          live.model = String(data.model);
          if (!held.current) {
            held.current = String(data.sessionId);
            navigate(`/chat/${agentId}/${held.current}`);
          }
        } else if (e.event === 'sources') live.sources = data.sources as Source[];
        else if (e.event === 'delta') live.content += String(data.text);
        else if (e.event === 'tool_call') live.toolCalls!.push(data as unknown as ToolCall);
        else if (e.event === 'tool_result') {
          const call = data as unknown as ToolCall;
          live.toolCalls = live.toolCalls!.map((c) => (c.id === call.id ? { ...c, ...call } : c));
        } else if (e.event === 'requires_action') {
          live.pending = data.pendingToolCalls as PendingCall[];
          if (Array.isArray(data.requiredActions)) live.actions = data.requiredActions as RequiredAction[];
        }
        else if (e.event === 'done') {
          // The reply as stored: its [n] renumbered to the sources it cites.
          live.content = typeof data.reply === 'string' ? data.reply : live.content;
          if (Array.isArray(data.sources)) live.sources = data.sources as Source[];
          // Answered by another agent the session was handed to: said under the reply.
          if (typeof data.agentId === 'string' && data.agentId !== agentId) live.agentId = data.agentId;
          if (Array.isArray(data.handoffs)) live.handoffs = data.handoffs as Message['handoffs'];
        }
        else if (e.event === 'error') throw new ApiError(0, String(data.code), String(data.message), data.details as Record<string, unknown>, undefined);
        show();
      }
    } catch (err) {
      if (stop.signal.aborted) return;
      setError(err);
      // A paused turn blocks the session: offer its calls for a decision.
      if (err instanceof ApiError && Array.isArray(err.details?.pendingToolCalls)) live.pending = err.details.pendingToolCalls as ToolCall[];
      if (err instanceof ApiError && Array.isArray(err.details?.requiredActions)) live.actions = err.details.requiredActions as RequiredAction[];
    } finally {
      live.streaming = false;
      if (!live.content && !live.pending?.length && !live.actions?.length && !live.toolCalls?.length) setMessages((list) => list.filter((m) => m.id !== live.id));
      else show();
      setBusy(false);
      sessions.reload();
    }
  }

  function send(e: Event) {
    e.preventDefault();
    const text = draft.trim();
    if (!text || busy) return;
    setDraft('');
    setMessages((list) => [...list, { id: `user-${Date.now()}`, role: 'user', content: text }]);
    void turn({ message: text });
  }

  /** A new session with the conversation up to this message: the way to try another turn from there. */
  async function fork(messageId: string) {
    try {
      const forked = await api<ForkedSession>('POST', `/v1/agents/${agentId}/sessions/${held.current}/fork`, { atMessageId: messageId });
      sessions.reload();
      navigate(`/chat/${agentId}/${forked.sessionId}`);
    } catch (err) {
      setError(err);
    }
  }

  function decide(message: Message, decisions: Array<{ id: string; approved: boolean; reason?: string }>) {
    setMessages((list) => list.map((m) => (m.id === message.id ? { ...m, pending: undefined } : m)));
    void turn({ toolApprovals: decisions });
  }

  /** The end user connected the accounts the turn waited for: it goes on. */
  function resume(message: Message) {
    setMessages((list) => list.map((m) => (m.id === message.id ? { ...m, pending: undefined, actions: undefined } : m)));
    void turn({ resume: true });
  }

  return (
    <div class="chat">
      <aside class="sessions" aria-label="Sessions">
        <a class="button secondary" href={`#/chat/${agentId}`}>
          New conversation
        </a>
        {sessions.value?.items.length === 0 ? <p class="muted small">No conversations yet.</p> : null}
        <ul>
          {sessions.value?.items.map((s) => (
            <li key={s.sessionId}>
              <a href={`#/chat/${agentId}/${s.sessionId}`} aria-current={s.sessionId === sessionId ? 'page' : undefined}>
                {formatDate(s.lastMessageAt)}
                <span class="muted small">
                  {' '}
                  {s.messages} messages{s.userId ? ` · ${s.userId}` : ''}
                </span>
              </a>
            </li>
          ))}
        </ul>
      </aside>
      <div class="conversation">
        <div class="log" ref={log} aria-live="polite" aria-busy={busy}>
          {messages.length === 0 ? <p class="muted">Ask something. Replies stream in; numbers in brackets open the passage they cite.</p> : null}
          {messages.map((m) => (
            <MessageView key={m.id} message={m} onOpen={setOpen} onDecide={(d) => decide(m, d)} onResume={() => resume(m)} onFork={held.current && m.id.startsWith('msg_') ? () => void fork(m.id) : undefined} />
          ))}
        </div>
        <ErrorBox error={error} />
        <form class="composer" onSubmit={send}>
          <label for="chat-message" class="visually-hidden">
            Message
          </label>
          <textarea
            id="chat-message"
            rows={2}
            value={draft}
            placeholder="Ask the agent…"
            onInput={(e) => setDraft(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey) send(e);
            }}
          />
          <button type="submit" disabled={busy || !draft.trim()}>
            {busy ? 'Answering…' : 'Send'}
          </button>
          <label class="small end-user">
            As end user{' '}
            <input value={endUser} placeholder="none" size={12} onInput={(e) => setEndUser(e.currentTarget.value)} />
          </label>
        </form>
      </div>
      {open ? <Passage source={open} onClose={() => setOpen(undefined)} /> : null}
    </div>
  );
}

function MessageView({
  message: m,
  onOpen,
  onDecide,
  onResume,
  onFork,
}: {
  message: Message;
  onOpen: (s: Source) => void;
  onDecide: (d: Array<{ id: string; approved: boolean; reason?: string }>) => void;
  onResume: () => void;
  /** Stored messages of a session: fork the conversation here. */
  onFork?: () => void;
}) {
  return (
    <article class={`message ${m.role}`} aria-label={m.role === 'user' ? 'You' : 'Agent'}>
      {m.toolCalls?.map((c) => (
        <details key={c.id} class="tool-call">
          <summary>
            Tool <code>{c.tool}</code> {c.result === undefined && c.error === undefined ? (m.pending?.some((p) => p.id === c.id) ? '(waiting)' : '(running…)') : c.error ? '(failed)' : `(${c.durationMs ?? 0} ms)`}
          </summary>
          <pre>{JSON.stringify(c.arguments ?? {}, null, 2)}</pre>
          {c.error ? <p class="error-text">{c.error}</p> : c.result !== undefined ? <pre class="tool-result">{c.result}</pre> : null}
          {c.child ? (
            <p class="small">
              Answered by agent <code>{c.child.agentId}</code> in <a href={`#/chat/${c.child.agentId}/${c.child.sessionId}`}>its child session</a>
            </p>
          ) : null}
        </details>
      ))}
      {m.handoffs?.map((h, i) => (
        <p key={i} class="muted small handoff">
          Handed from <code>{h.from}</code> to <code>{h.to}</code>
        </p>
      ))}
      {/* A turn that stopped for approval has nothing to say yet. */}
      {m.content || m.streaming ? (
        <div class="bubble">
          <CitedText text={m.content} sources={m.sources ?? []} onOpen={onOpen} />
          {m.streaming && !m.content ? <span class="muted">…</span> : null}
        </div>
      ) : null}
      {m.sources && m.sources.length > 0 && m.role === 'assistant' ? (
        <ol class="sources" aria-label="Sources">
          {m.sources.map((s, i) => (
            <li key={s.chunkId + s.documentId + i}>
              <button type="button" class="link" onClick={() => onOpen(s)}>
                [{i + 1}] {citationOf(s) || s.documentId}
              </button>
            </li>
          ))}
        </ol>
      ) : null}
      {m.agentId && m.role === 'assistant' ? (
        <p class="muted small">
          Answered by <code>{m.agentId}</code> (the session was handed to it)
        </p>
      ) : null}
      {m.actions?.length ? <ConnectAccounts actions={m.actions} onDone={onResume} /> : m.pending?.length ? <Approvals calls={m.pending} onDecide={onDecide} /> : null}
      {onFork ? (
        <button type="button" class="link small fork" title="A new conversation with the messages up to this one" onClick={onFork}>
          Fork from here
        </button>
      ) : null}
    </article>
  );
}

/** The reply with its [n] markers as buttons that open the cited passage. */
function CitedText({ text, sources, onOpen }: { text: string; sources: Source[]; onOpen: (s: Source) => void }) {
  const parts = text.split(/(\[\d+\])/);
  return (
    <p>
      {parts.map((part, i) => {
        const n = /^\[(\d+)\]$/.exec(part);
        const source = n ? sources[Number(n[1]) - 1] : undefined;
        return source ? (
          <button key={i} type="button" class="citation" aria-label={`Citation ${n![1]}: ${citationOf(source) || source.documentId}`} onClick={() => onOpen(source)}>
            {part}
          </button>
        ) : (
          part
        );
      })}
    </p>
  );
}

/** Accounts the end user must connect before the turn goes on: a link to each provider, then go on. */
export function ConnectAccounts({ actions, onDone }: { actions: RequiredAction[]; onDone?: () => void }) {
  return (
    <div class="approvals" role="group" aria-label="Accounts to connect">
      <p>
        <strong>Waiting for the end user to connect {actions.length === 1 ? 'an account' : 'accounts'}</strong>
      </p>
      <ul>
        {actions.map((a) => (
          <li key={a.provider}>
            <a href={a.url} target="_blank" rel="noopener noreferrer">
              Connect {a.provider}
            </a>
          </li>
        ))}
      </ul>
      {onDone ? (
        <button type="button" onClick={onDone}>
          Connected: continue
        </button>
      ) : (
        <p class="small muted">The run goes on by itself once they have.</p>
      )}
    </div>
  );
}

export function Approvals({ calls, onDecide }: { calls: PendingCall[]; onDecide: (d: Array<{ id: string; approved: boolean; reason?: string }>) => void }) {
  const [reasons, setReasons] = useState<Record<string, string>>({});
  const [decisions, setDecisions] = useState<Record<string, boolean>>({});
  const decided = calls.every((c) => decisions[c.id] !== undefined);
  const choose = (id: string, approved: boolean) => {
    const next = { ...decisions, [id]: approved };
    setDecisions(next);
    if (calls.every((c) => next[c.id] !== undefined)) {
      onDecide(calls.map((c) => ({ id: c.id, approved: next[c.id]!, ...(reasons[c.id] ? { reason: reasons[c.id] } : {}) })));
    }
  };
  return (
    <div class="approvals" role="group" aria-label="Tool calls waiting for approval">
      <p>
        <strong>Waiting for your approval</strong>
      </p>
      {calls.map((c) => (
        <div key={c.id} class="approval">
          <p>
            <code>{c.tool}</code> with
          </p>
          <pre>{JSON.stringify(c.arguments ?? {}, null, 2)}</pre>
          {c.asks ? <p class="small">It waits on: {c.asks}</p> : null}
          <label for={`reason-${c.id}`}>Reason (optional, told to the agent)</label>
          <input id={`reason-${c.id}`} value={reasons[c.id] ?? ''} onInput={(e) => setReasons({ ...reasons, [c.id]: e.currentTarget.value })} />
          <div class="row">
            <button type="button" disabled={decisions[c.id] !== undefined} onClick={() => choose(c.id, true)}>
              Approve {c.tool}
            </button>
            <button type="button" class="danger" disabled={decisions[c.id] !== undefined} onClick={() => choose(c.id, false)}>
              Reject {c.tool}
            </button>
          </div>
        </div>
      ))}
      {decided ? <p class="muted">Resuming…</p> : null}
    </div>
  );
}

function Passage({ source, onClose }: { source: Source; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    ref.current?.showModal();
  }, [source]);
  return (
    <dialog ref={ref} class="passage" aria-labelledby="passage-title" onClose={onClose}>
      <h2 id="passage-title">{citationOf(source) || source.documentId}</h2>
      <p class="muted small">
        {source.knowledgeSourceId} · {source.documentId} · score {source.score.toFixed(3)}
      </p>
      <blockquote>{source.snippet}</blockquote>
      <div class="row">
        <a href={`#/knowledge/${source.knowledgeSourceId}`} onClick={() => ref.current?.close()}>
          Open the knowledge source
        </a>
        <button type="button" onClick={() => ref.current?.close()}>
          Close
        </button>
      </div>
    </dialog>
  );
}
