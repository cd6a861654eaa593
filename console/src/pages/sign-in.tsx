import { useState } from 'preact/hooks';
import { ApiError, errorOf } from '../api';
import { signIn, signedOutBecause } from '../credentials';

/**
 * Sign in with a tenant's API key (the /v1 pages), a platform access token (tables and memory),
 * or both. Each is checked against the API before it is kept.
 */
export function SignIn() {
  const [apiKey, setApiKey] = useState('');
  const [platformToken, setPlatformToken] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  async function submit(e: Event) {
    e.preventDefault();
    const key = apiKey.trim();
    const token = platformToken.trim();
    if (!key && !token) return setError('Enter an API key, a platform access token, or both.');
    setBusy(true);
    setError(undefined);
    try {
      let tenantId: string | undefined;
      if (key) await check('/v1/agents?limit=1', { 'x-api-key': key }, 'API key');
      if (token) tenantId = ((await check('/platform/login/session', { authorization: `Bearer ${token}` }, 'Platform token')) as { tenantId?: string }).tenantId;
      signIn({ ...(key ? { apiKey: key } : {}), ...(token ? { platformToken: token, tenantId } : {}) });
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main id="main" class="sign-in">
      <h1>Sign in to Cairn</h1>
      <p class="muted">
        Your key and token stay in this tab's session storage and are sent only to this Cairn. <code>npm start</code> prints a
        <code> DEV_API_KEY</code>.
      </p>
      {signedOutBecause.value ? (
        <p class="notice" role="status">
          Signed out: {signedOutBecause.value}
        </p>
      ) : null}
      <form onSubmit={(e) => void submit(e)} class="stack">
        <label for="api-key">API key</label>
        <input id="api-key" type="password" autoComplete="off" placeholder="cak_…" value={apiKey} onInput={(e) => setApiKey(e.currentTarget.value)} />
        <label for="platform-token">Platform access token (optional)</label>
        <input
          id="platform-token"
          type="password"
          autoComplete="off"
          placeholder="cpt_v1.…"
          value={platformToken}
          onInput={(e) => setPlatformToken(e.currentTarget.value)}
        />
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" disabled={busy}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}

/** Asks the API with credentials not kept yet (so a refusal is this form's error, not a sign-out). */
async function check(path: string, headers: Record<string, string>, what: string): Promise<unknown> {
  const res = await fetch(path, { headers });
  if (res.ok) return ((await res.json()) as { data: unknown }).data;
  const error = await errorOf(res);
  throw new ApiError(error.status, error.code, `${what}: ${error.message}`, error.details, error.requestId);
}
