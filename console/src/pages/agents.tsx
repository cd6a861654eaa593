import { useEffect, useState } from 'preact/hooks';
import { api, apiAll, ifMatch } from '../api';
import { PagedTable } from '../components/paged-table';
import { checkDrafts } from '../json-input';
import { navigate } from '../router';
import { Empty, ErrorBox, FieldError, Loading, fieldMessage, formatDate, useLoad } from '../components/ui';

import type { Agent, KnowledgeSource } from '../contract';

export function AgentsPage() {
  return (
    <section>
      <div class="page-head">
        <h1>Agents</h1>
        <a class="button" href="#/agents/new">
          New agent
        </a>
      </div>
      <PagedTable<Agent>
        path="/v1/agents"
        what="agents"
        columns={['Name', 'Model', 'Knowledge', 'Tools', 'Updated', '']}
        empty={
          <Empty title="No agents yet">
            <p>
              Create an agent: give it a model, connect <a href="#/knowledge">knowledge sources</a> it may cite and tools it may call, then
              try it in the chat.
            </p>
            <a class="button" href="#/agents/new">
              Create your first agent
            </a>
          </Empty>
        }
        row={(a) => (
          <tr key={a.id}>
            <td>
              <a href={`#/agents/${a.id}`}>{a.name}</a>
              <div class="muted small">{a.id}</div>
            </td>
            <td>{a.model}</td>
            <td>{a.knowledgeSourceIds.length}</td>
            <td>
              {a.tools.length}
              {a.tools.some((t) => t.requireApproval) ? <span class="badge badge-waiting">approval</span> : null}
            </td>
            <td>{formatDate(a.updatedAt)}</td>
            <td>
              <a href={`#/chat/${a.id}`}>Chat</a>
            </td>
          </tr>
        )}
      />
    </section>
  );
}

const TOOL_TEMPLATES: Record<string, Record<string, unknown>> = {
  http: {
    type: 'http',
    name: 'order_status',
    description: 'Looks up the delivery status of an order by its order number',
    url: 'https://shop.example/orders/{{orderId}}',
    parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
  },
  openapi: { type: 'openapi', name: 'shop', url: 'https://shop.example/openapi.yaml', operations: ['getOrder'] },
  mcp: { type: 'mcp', name: 'crm', url: 'https://mcp.example.com/mcp', allowedTools: ['find_customer'] },
  knowledge_search: { type: 'knowledge_search', name: 'search_docs', description: 'Searches the help centre' },
  workflow: { type: 'workflow', name: 'refund', description: 'Starts a refund request', workflowId: 'wf_…' },
  code: { type: 'code' },
  agent: { type: 'agent', name: 'ask_billing', description: 'Asks the billing agent about refunds and invoices', agent: 'agt_…' },
  a2a: {
    type: 'a2a',
    name: 'ask_partner',
    description: 'Asks the partner’s agent about its orders',
    card: 'https://partner.example/a2a/agt_…/.well-known/agent-card.json',
    auth: { type: 'bearer', token: '' },
  },
};

interface ToolDraft {
  text: string;
  requireApproval: boolean;
  parseError?: string;
}

const toolDraft = (tool: Record<string, unknown>): ToolDraft => {
  const { requireApproval, exposes: _exposes, ...rest } = tool;
  return { text: JSON.stringify(rest, null, 2), requireApproval: requireApproval === true };
};

/** Create or edit an agent; the API's validation messages show at their field. */
export function AgentEditor({ id }: { id?: string }) {
  const existing = useLoad((signal) => (id ? api<Agent>('GET', `/v1/agents/${id}`, undefined, signal) : Promise.resolve(undefined)), [id]);
  const sources = useLoad(() => apiAll<KnowledgeSource>('/v1/knowledge-sources'), []);
  const [handoffs, setHandoffs] = useState<string[]>([]);
  // Other agents are listed when handoffs are being chosen (or the agent has some), not on every visit.
  const [choosing, setChoosing] = useState(false);
  const others = useLoad(() => (choosing || handoffs.length > 0 ? apiAll<Agent>('/v1/agents') : Promise.resolve(undefined)), [choosing, handoffs.length > 0]);
  const [a2a, setA2a] = useState({ enabled: false, alias: '' });
  const [form, setForm] = useState({ name: '', description: '', model: 'gpt-4', fallbackModels: '', instructions: '', temperature: '0.7', maxTokens: '1024', maxToolSteps: '5', memoryMode: 'rules', memoryModel: '' });
  const [capabilities, setCapabilities] = useState<string[]>(['chat']);
  const [sourceIds, setSourceIds] = useState<string[]>([]);
  const [tools, setTools] = useState<ToolDraft[]>([]);
  const [error, setError] = useState<unknown>();
  const [saving, setSaving] = useState(false);
  const [saved, setSaved] = useState(false);

  useEffect(() => {
    const a = existing.value;
    if (!a) return;
    setForm({
      name: a.name,
      description: a.description,
      model: a.model,
      fallbackModels: (a.fallbackModels ?? []).join(', '),
      instructions: a.instructions ?? '',
      temperature: String(a.temperature),
      maxTokens: String(a.maxTokens),
      maxToolSteps: String(a.maxToolSteps),
      memoryMode: a.memory.mode,
      memoryModel: a.memory.model ?? '',
    });
    setCapabilities(a.capabilities);
    setSourceIds(a.knowledgeSourceIds);
    setTools(a.tools.map(toolDraft));
    setHandoffs(a.handoffs);
    setA2a({ enabled: a.a2a?.enabled ?? false, alias: a.a2a?.alias ?? '' });
  }, [existing.value]);

  const set = (field: keyof typeof form) => (e: Event) => setForm({ ...form, [field]: (e.currentTarget as HTMLInputElement).value });
  const toggle = (list: string[], value: string, on: boolean) => (on ? [...new Set([...list, value])] : list.filter((v) => v !== value));

  async function save(e: Event) {
    e.preventDefault();
    setSaved(false);
    // Tools are JSON the API validates; a draft that is not JSON is caught here, at its box.
    const checked = checkDrafts(tools, (t) => t.text);
    setTools(checked.drafts);
    const parsed = checked.values;
    if (!parsed) return;
    const fallbackModels = form.fallbackModels.split(',').map((m) => m.trim()).filter(Boolean);
    const kept = existing.value;
    const body = {
      // PUT replaces: settings this form does not edit go back as they were.
      ...(kept?.guardrails ? { guardrails: kept.guardrails } : {}),
      ...(kept?.searchMode ? { searchMode: kept.searchMode } : {}),
      name: form.name,
      description: form.description,
      model: form.model,
      ...(fallbackModels.length > 0 ? { fallbackModels } : {}),
      ...(form.instructions ? { instructions: form.instructions } : {}),
      temperature: Number(form.temperature),
      maxTokens: Number(form.maxTokens),
      maxToolSteps: Number(form.maxToolSteps),
      memory: { mode: form.memoryMode as 'off' | 'rules' | 'model', ...(form.memoryMode === 'model' && form.memoryModel ? { model: form.memoryModel } : {}) },
      capabilities,
      knowledgeSourceIds: sourceIds,
      tools: parsed.map((tool, i) => ({ ...(tool as object), requireApproval: tools[i]!.requireApproval })),
      handoffs,
      ...(a2a.enabled ? { a2a: { enabled: true, ...(a2a.alias ? { alias: a2a.alias } : {}) } } : {}),
    };
    setSaving(true);
    setError(undefined);
    try {
      const agent = await api<Agent>(id ? 'PUT' : 'POST', id ? `/v1/agents/${id}` : '/v1/agents', body, undefined, id ? ifMatch(existing.value) : undefined);
      setSaved(true);
      if (!id) navigate(`/agents/${agent.id}`);
      else existing.reload();
    } catch (err) {
      setError(err);
    } finally {
      setSaving(false);
    }
  }

  async function remove() {
    if (!id || !confirm(`Delete agent ${form.name}? Its sessions and memory go with it.`)) return;
    try {
      await api('DELETE', `/v1/agents/${id}`, undefined, undefined, ifMatch(existing.value));
      navigate('/agents');
    } catch (err) {
      setError(err);
    }
  }

  if (id && existing.loading && !existing.value) return <Loading what="the agent" />;
  if (existing.error) return <ErrorBox error={existing.error} />;

  const input = (field: keyof typeof form, label: string, props: Record<string, unknown> = {}) => (
    <div class="field">
      <label for={`agent-${field}`}>{label}</label>
      <input
        id={`agent-${field}`}
        value={form[field]}
        onInput={set(field)}
        aria-invalid={fieldMessage(error, field) ? true : undefined}
        aria-describedby={`agent-${field}-error`}
        {...props}
      />
      <FieldError error={error} field={field} id={`agent-${field}-error`} />
    </div>
  );

  return (
    <section>
      <div class="page-head">
        <h1>{id ? `Agent: ${existing.value?.name ?? id}` : 'New agent'}</h1>
        {id ? (
          <div class="row">
            <a class="button secondary" href={`#/agents/${id}/releases`}>
              Versions and aliases
            </a>
            <a class="button secondary" href={`#/chat/${id}`}>
              Open in chat
            </a>
            <a class="button secondary" href={`#/agents/${id}/runs`}>
              Background runs
            </a>
          </div>
        ) : null}
      </div>
      <form onSubmit={(e) => void save(e)} class="editor" noValidate>
        <div class="grid-2">
          {input('name', 'Name', { required: true })}
          {input('model', 'Model', { list: 'models' })}
        </div>
        <datalist id="models">
          {['gpt-4', 'local/extractive', 'bedrock/anthropic.claude-3-5-haiku-20241022-v1:0', 'openai/gpt-4o-mini', 'anthropic/claude-3-5-haiku-latest'].map((m) => (
            <option key={m} value={m} />
          ))}
        </datalist>
        {input('fallbackModels', 'Fallback models (tried in order when the model fails; comma-separated)', { list: 'models', placeholder: 'anthropic/claude-3-5-haiku-latest, local/extractive' })}
        {input('description', 'Description')}
        <div class="field">
          <label for="agent-instructions">Instructions (system prompt)</label>
          <textarea id="agent-instructions" rows={3} value={form.instructions} onInput={set('instructions')} />
          <FieldError error={error} field="instructions" />
        </div>
        <div class="grid-3">
          {input('temperature', 'Temperature (0–2)', { inputMode: 'decimal' })}
          {input('maxTokens', 'Max tokens', { inputMode: 'numeric' })}
          {input('maxToolSteps', 'Max tool rounds', { inputMode: 'numeric' })}
        </div>
        <div class="grid-2">
          <div class="field">
            <label for="agent-memoryMode">Memory of its users</label>
            <select id="agent-memoryMode" value={form.memoryMode} onChange={set('memoryMode')}>
              <option value="rules">Rules: built-in extraction, no model call</option>
              <option value="model">Model: a model extracts after each turn (billed as usage)</option>
              <option value="off">Off: remember nothing</option>
            </select>
            <FieldError error={error} field="memory.mode" />
          </div>
          {form.memoryMode === 'model' ? input('memoryModel', 'Memory model (default: the agent’s model)', { list: 'models', placeholder: 'openai/gpt-4o-mini' }) : <div />}
        </div>
        <fieldset>
          <legend>Capabilities</legend>
          {['chat', 'document-search'].map((cap) => (
            <label key={cap} class="check">
              <input type="checkbox" checked={capabilities.includes(cap)} onChange={(e) => setCapabilities(toggle(capabilities, cap, e.currentTarget.checked))} /> {cap}
            </label>
          ))}
          <FieldError error={error} field="capabilities" />
        </fieldset>
        <fieldset>
          <legend>Knowledge sources</legend>
          {sources.value?.length === 0 ? (
            <p class="muted">
              No knowledge sources yet. <a href="#/knowledge">Create one</a> to ground the agent's answers.
            </p>
          ) : null}
          {sources.value?.map((s) => (
            <label key={s.id} class="check">
              <input type="checkbox" checked={sourceIds.includes(s.id)} onChange={(e) => setSourceIds(toggle(sourceIds, s.id, e.currentTarget.checked))} /> {s.name}{' '}
              <span class="muted small">({s.status})</span>
            </label>
          ))}
          <FieldError error={error} field="knowledgeSourceIds" />
        </fieldset>
        <fieldset>
          <legend>Tools</legend>
          {tools.length === 0 ? <p class="muted">No tools: the agent only answers. Add one below.</p> : null}
          {tools.map((t, i) => (
            <div class="tool" key={i}>
              <label for={`tool-${i}`}>Tool {i + 1} (JSON)</label>
              <textarea
                id={`tool-${i}`}
                class="code"
                rows={Math.min(14, t.text.split('\n').length + 1)}
                value={t.text}
                aria-invalid={t.parseError || fieldMessage(error, `tools[${i}]`) ? true : undefined}
                onInput={(e) => setTools(tools.map((x, j) => (j === i ? { ...x, text: e.currentTarget.value } : x)))}
              />
              {t.parseError ? (
                <p class="field-error" role="alert">
                  {t.parseError}
                </p>
              ) : null}
              <FieldError error={error} field={`tools[${i}]`} />
              <div class="row">
                <label class="check">
                  <input
                    type="checkbox"
                    checked={t.requireApproval}
                    onChange={(e) => setTools(tools.map((x, j) => (j === i ? { ...x, requireApproval: e.currentTarget.checked } : x)))}
                  />{' '}
                  Require approval before each call
                </label>
                <button type="button" class="link danger" onClick={() => setTools(tools.filter((_, j) => j !== i))}>
                  Remove tool {i + 1}
                </button>
              </div>
            </div>
          ))}
          <div class="row">
            <label for="add-tool">Add a tool</label>
            <select
              id="add-tool"
              value=""
              onChange={(e) => {
                const kind = e.currentTarget.value;
                if (kind) setTools([...tools, toolDraft(TOOL_TEMPLATES[kind]!)]);
                e.currentTarget.value = '';
              }}
            >
              <option value="">Choose a kind…</option>
              {Object.keys(TOOL_TEMPLATES).map((k) => (
                <option key={k} value={k}>
                  {k}
                </option>
              ))}
            </select>
          </div>
          <FieldError error={error} field="tools" exact />
        </fieldset>
        <fieldset>
          <legend>Handoffs</legend>
          <p class="muted small">The agent’s model may hand the conversation to these (a transfer_to_… tool each): the target answers, and keeps the session until it hands back.</p>
          {!others.value && !others.loading ? (
            <button type="button" class="secondary" onClick={() => setChoosing(true)}>
              Choose agents to hand over to
            </button>
          ) : null}
          {others.value?.filter((o) => o.id !== id).length === 0 ? <p class="muted">No other agents yet.</p> : null}
          {others.value
            ?.filter((o) => o.id !== id)
            .map((o) => (
              <label key={o.id} class="check">
                <input type="checkbox" checked={handoffs.includes(o.id)} onChange={(e) => setHandoffs(toggle(handoffs, o.id, e.currentTarget.checked))} /> {o.name}{' '}
                <span class="muted small">({o.id})</span>
              </label>
            ))}
          {/* Targets named with a release (agt_…:live) are kept as they are. */}
          {handoffs
            .filter((h) => !others.value?.some((o) => o.id === h))
            .map((h) => (
              <label key={h} class="check">
                <input type="checkbox" checked onChange={() => setHandoffs(handoffs.filter((x) => x !== h))} /> {h}
              </label>
            ))}
          {handoffs.map((_, i) => (
            <FieldError key={i} error={error} field={`handoffs[${i}]`} />
          ))}
        </fieldset>
        <fieldset>
          <legend>A2A</legend>
          <label class="check">
            <input type="checkbox" checked={a2a.enabled} onChange={(e) => setA2a({ ...a2a, enabled: e.currentTarget.checked })} /> Publish over the A2A protocol (other agents reach it with a key of this tenant)
          </label>
          {a2a.enabled ? (
            <div class="field">
              <label for="agent-a2a-alias">Alias A2A tasks run (empty: the draft)</label>
              <input id="agent-a2a-alias" value={a2a.alias} onInput={(e) => setA2a({ ...a2a, alias: e.currentTarget.value })} placeholder="live" />
              <FieldError error={error} field="a2a.alias" />
            </div>
          ) : null}
          {id && existing.value?.a2a?.enabled ? (
            <p class="small">
              Agent card: <code>{`${location.origin}/a2a/${id}/.well-known/agent-card.json`}</code>
            </p>
          ) : null}
        </fieldset>
        <ErrorBox error={error} />
        {saved ? (
          <p class="notice" role="status">
            Saved.
          </p>
        ) : null}
        <div class="row">
          <button type="submit" disabled={saving}>
            {saving ? 'Saving…' : id ? 'Save changes' : 'Create agent'}
          </button>
          {id ? (
            <button type="button" class="danger" onClick={() => void remove()}>
              Delete agent
            </button>
          ) : null}
        </div>
      </form>
    </section>
  );
}
