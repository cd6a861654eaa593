import { render } from 'preact';
import { useEffect } from 'preact/hooks';
import { session } from './credentials';
import { match, replaceRoute, route } from './router';
import { SignIn } from './pages/sign-in';
import { AgentsPage, AgentEditor } from './pages/agents';
import { KnowledgeList, KnowledgeDetail } from './pages/knowledge';
import { ChatPage } from './pages/chat';
import { WorkflowsList, WorkflowDetail } from './pages/workflows';
import { ExecutionPage } from './pages/execution';
import { ReleasesPage } from './pages/releases';
import { RunPage, RunsPage } from './pages/runs';
import { UsagePage } from './pages/usage';
import { ConnectionsPage } from './pages/connections';
import { TracePage } from './pages/traces';
import { EvalComparePage, EvalDatasetPage, EvalRunPage, EvalsPage } from './pages/evals';
import { TablesPage, MemoryPage } from './pages/platform';
import { Shell } from './components/shell';
import './styles.css';

/** Page per route; the first whose pattern matches wins. */
const PAGES: Array<[string, (p: Record<string, string>) => preact.JSX.Element]> = [
  ['/agents', () => <AgentsPage />],
  ['/agents/new', () => <AgentEditor />],
  ['/agents/:id', (p) => <AgentEditor id={p.id} />],
  ['/agents/:id/releases', (p) => <ReleasesPage kind="agents" id={p.id!} />],
  ['/agents/:id/runs', (p) => <RunsPage agentId={p.id!} />],
  ['/agents/:id/runs/:runId', (p) => <RunPage agentId={p.id!} runId={p.runId!} />],
  ['/knowledge', () => <KnowledgeList />],
  ['/knowledge/:id', (p) => <KnowledgeDetail id={p.id!} />],
  ['/chat', () => <ChatPage />],
  ['/chat/:agentId', (p) => <ChatPage agentId={p.agentId} />],
  ['/chat/:agentId/:sessionId', (p) => <ChatPage agentId={p.agentId} sessionId={p.sessionId} />],
  ['/workflows', () => <WorkflowsList />],
  ['/workflows/new', () => <WorkflowDetail />],
  ['/workflows/:id', (p) => <WorkflowDetail id={p.id} />],
  ['/workflows/:id/releases', (p) => <ReleasesPage kind="workflows" id={p.id!} />],
  ['/workflows/:id/executions/:executionId', (p) => <ExecutionPage workflowId={p.id!} executionId={p.executionId!} />],
  ['/evals', () => <EvalsPage />],
  ['/evals/datasets/:id', (p) => <EvalDatasetPage id={p.id!} />],
  ['/evals/runs/:id', (p) => <EvalRunPage id={p.id!} />],
  ['/evals/compare/:a/:b', (p) => <EvalComparePage a={p.a!} b={p.b!} />],
  ['/usage', () => <UsagePage />],
  ['/connections', () => <ConnectionsPage />],
  ['/traces', () => <TracePage />],
  ['/traces/:requestId', (p) => <TracePage requestId={p.requestId} />],
  ['/platform/tables', () => <TablesPage />],
  ['/platform/memory', () => <MemoryPage />],
];

function App() {
  const c = session.value;
  const signedIn = !!(c.apiKey || c.platformToken);
  // A page the credentials do not open (left in the address by an earlier sign-in) gives way to home.
  const opens = route.value.startsWith('/platform/') ? !!c.platformToken : !!c.apiKey;
  const path = route.value === '/' || !opens ? (c.apiKey ? '/agents' : '/platform/tables') : route.value;
  useEffect(() => {
    if (signedIn && path !== route.value) replaceRoute(path);
  }, [signedIn, path]);
  if (!signedIn) return <SignIn />;
  for (const [pattern, page] of PAGES) {
    const params = match(pattern, path);
    if (params) return <Shell path={path}>{page(params)}</Shell>;
  }
  return (
    <Shell path={path}>
      <h1>Not found</h1>
      <p>
        There is no page at <code>{path}</code>. <a href="#/agents">Go to agents</a>.
      </p>
    </Shell>
  );
}

render(<App />, document.getElementById('app')!);
