import type { ComponentChildren } from 'preact';
import { session, signOut } from '../credentials';

const KEY_PAGES = [
  ['/agents', 'Agents'],
  ['/knowledge', 'Knowledge'],
  ['/chat', 'Chat'],
  ['/workflows', 'Workflows'],
  ['/evals', 'Evaluations'],
  ['/usage', 'Usage'],
  ['/traces', 'Traces'],
  ['/connections', 'Connections'],
] as const;
const PLATFORM_PAGES = [
  ['/platform/tables', 'Tables'],
  ['/platform/memory', 'Memory graph'],
] as const;

/** The frame of every signed-in page: navigation by what the credentials open, and the page. */
export function Shell({ path, children }: { path: string; children: ComponentChildren }) {
  const c = session.value;
  const link = ([to, label]: readonly [string, string]) => (
    <li key={to}>
      <a href={`#${to}`} aria-current={path === to || path.startsWith(`${to}/`) ? 'page' : undefined}>
        {label}
      </a>
    </li>
  );
  return (
    <div class="shell">
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header class="topbar">
        <span class="brand" aria-label="Cairn console">
          ◆ Cairn
        </span>
        <nav aria-label="Main">
          {c.apiKey ? <ul>{KEY_PAGES.map(link)}</ul> : null}
          {c.platformToken ? (
            <ul aria-label={`Platform (${c.tenantId ?? 'tenant'})`}>
              <li class="nav-group" aria-hidden="true">
                Platform
              </li>
              {PLATFORM_PAGES.map(link)}
            </ul>
          ) : null}
        </nav>
        <button type="button" class="secondary" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
