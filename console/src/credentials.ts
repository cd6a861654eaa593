/**
 * What the console signed in with, kept in session storage only: it goes with the tab, never to
 * local storage or a cookie.
 */
import { signal } from '@preact/signals';

export interface Credentials {
  apiKey?: string;
  platformToken?: string;
  /** The tenant the platform token belongs to (from /platform/login/session). */
  tenantId?: string;
}

const KEY = 'cairn.console.credentials';

function load(): Credentials {
  try {
    return JSON.parse(sessionStorage.getItem(KEY) ?? '{}') as Credentials;
  } catch {
    return {};
  }
}

export const session = signal<Credentials>(load());
/** Why the last session ended (shown on the sign-in page). */
export const signedOutBecause = signal<string | undefined>(undefined);

export const credentials = () => session.value;

export function signIn(c: Credentials) {
  sessionStorage.setItem(KEY, JSON.stringify(c));
  signedOutBecause.value = undefined;
  session.value = c;
}

export function signOut(reason?: string) {
  sessionStorage.removeItem(KEY);
  signedOutBecause.value = reason;
  session.value = {};
}
