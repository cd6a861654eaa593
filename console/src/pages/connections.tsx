import { useState } from 'preact/hooks';
import { api } from '../api';
import type { Schemas } from '../contract';
import { ErrorBox, FieldError, Loading, Table, formatDate, useAction, useLoad } from '../components/ui';

type Provider = Schemas['OAuthProvider'];
type Connection = Schemas['EndUserConnection'];

/** OAuth providers end users connect their accounts at, and one end user's connections (disconnect, or a link to connect). */
export function ConnectionsPage() {
  const providers = useLoad((signal) => api<Provider[]>('GET', '/v1/oauth-providers', undefined, signal), []);
  const { error, run } = useAction();
  function remove(name: string) {
    if (!confirm(`Delete ${name}? Every end user's connection to it is removed and revoked.`)) return;
    void run(async () => {
      await api('DELETE', `/v1/oauth-providers/${name}`);
      providers.reload();
    });
  }
  return (
    <section>
      <div class="page-head">
        <h1>Connections</h1>
      </div>
      <p class="muted">Providers where end users connect their accounts (authorization code with PKCE); their tokens are sealed and never shown.</p>
      <h2>OAuth providers</h2>
      <ErrorBox error={error ?? providers.error} />
      {providers.loading && !providers.value ? <Loading what="the providers" /> : null}
      {providers.value && providers.value.length > 0 ? (
        <Table columns={['Name', 'Authorization', 'Scopes', 'Client', '']}>
          {providers.value.map((p) => (
            <tr key={p.name}>
              <td>{p.name}</td>
              <td class="small">{p.issuer ?? p.authorizationUrl}</td>
              <td>{p.scopes.join(' ') || '—'}</td>
              <td class="small">
                {p.clientId} {p.clientSecretConfigured ? '(secret set)' : '(no secret)'}
              </td>
              <td>
                <button type="button" class="link danger" onClick={() => remove(p.name)}>
                  Delete {p.name}
                </button>
              </td>
            </tr>
          ))}
        </Table>
      ) : providers.value ? (
        <p class="muted">No provider yet: add one below.</p>
      ) : null}
      <NewProvider onCreated={() => providers.reload()} />
      <EndUserConnections providers={providers.value ?? []} />
    </section>
  );
}

function NewProvider({ onCreated }: { onCreated: () => void }) {
  const [form, setForm] = useState({ name: '', issuer: '', clientId: '', clientSecret: '', scopes: '' });
  const { busy, error, run } = useAction();
  const field = (key: keyof typeof form) => ({ value: form[key], onInput: (e: { currentTarget: HTMLInputElement }) => setForm({ ...form, [key]: e.currentTarget.value }) });
  function create(e: Event) {
    e.preventDefault();
    void run(async () => {
      await api('POST', '/v1/oauth-providers', { name: form.name, issuer: form.issuer, clientId: form.clientId, ...(form.clientSecret ? { clientSecret: form.clientSecret } : {}), scopes: form.scopes.split(/\s+/).filter(Boolean) });
      setForm({ name: '', issuer: '', clientId: '', clientSecret: '', scopes: '' });
      onCreated();
    });
  }
  return (
    <form class="card editor" onSubmit={create} noValidate>
      <h2>New OAuth provider</h2>
      <div class="grid-2">
        <div class="field">
          <label for="provider-name">Name (tools name it)</label>
          <input id="provider-name" {...field('name')} placeholder="calendar" />
          <FieldError error={error} field="name" />
        </div>
        <div class="field">
          <label for="provider-issuer">Issuer (OpenID Connect discovery)</label>
          <input id="provider-issuer" {...field('issuer')} placeholder="https://login.example.com" />
          <FieldError error={error} field="issuer" />
        </div>
        <div class="field">
          <label for="provider-client">Client id</label>
          <input id="provider-client" {...field('clientId')} />
          <FieldError error={error} field="clientId" />
        </div>
        <div class="field">
          <label for="provider-secret">Client secret (sealed, never shown again)</label>
          <input id="provider-secret" type="password" autocomplete="off" {...field('clientSecret')} />
        </div>
        <div class="field">
          <label for="provider-scopes">Scopes (space-separated)</label>
          <input id="provider-scopes" {...field('scopes')} placeholder="openid offline_access calendar.read" />
        </div>
      </div>
      <ErrorBox error={error} />
      <button type="submit" disabled={busy}>
        {busy ? 'Adding…' : 'Add provider'}
      </button>
    </form>
  );
}

function EndUserConnections({ providers }: { providers: Provider[] }) {
  const [userId, setUserId] = useState('');
  const [shown, setShown] = useState<{ userId: string; connections: Connection[] }>();
  const [link, setLink] = useState<{ provider: string; url: string; expiresAt: string }>();
  const { error, run } = useAction();
  const connectionsOf = async (id: string) => setShown({ userId: id, connections: await api<Connection[]>('GET', `/v1/end-users/${encodeURIComponent(id)}/connections`) });
  const pathOf = (id: string, provider: string) => `/v1/end-users/${encodeURIComponent(id)}/connections/${provider}`;
  const connect = (id: string, provider: string) => void run(async () => setLink(await api<{ provider: string; url: string; expiresAt: string }>('POST', pathOf(id, provider), {})));
  const disconnect = (id: string, provider: string) =>
    void run(async () => {
      await api('DELETE', pathOf(id, provider));
      await connectionsOf(id);
    });
  return (
    <>
      <h2>An end user’s connections</h2>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          void run(() => connectionsOf(userId.trim()));
        }}
      >
        <label for="connections-user">End user id</label>
        <input id="connections-user" value={userId} onInput={(e) => setUserId(e.currentTarget.value)} placeholder="u-42" />
        <button type="submit" disabled={!userId.trim()}>
          Show connections
        </button>
      </form>
      <ErrorBox error={error} />
      {shown ? (
        <Table columns={['Provider', 'Scopes', 'Connected', 'Refreshed', '']}>
          {providers.map((p) => {
            const c = shown.connections.find((x) => x.provider === p.name);
            return (
              <tr key={p.name}>
                <td>{p.name}</td>
                <td>{c ? c.scopes.join(' ') : '—'}</td>
                <td>{c ? formatDate(c.connectedAt) : 'not connected'}</td>
                <td>{c?.refreshedAt ? formatDate(c.refreshedAt) : '—'}</td>
                <td>
                  {c ? (
                    <button type="button" class="link danger" onClick={() => disconnect(shown.userId, p.name)}>
                      Disconnect {p.name}
                    </button>
                  ) : (
                    <button type="button" class="link" onClick={() => connect(shown.userId, p.name)}>
                      Link to connect {p.name}
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </Table>
      ) : null}
      {link ? (
        <p class="small">
          Send {shown?.userId} to <a href={link.url}>{link.provider}’s sign-in</a> (valid until {formatDate(link.expiresAt)}, once).
        </p>
      ) : null}
    </>
  );
}
