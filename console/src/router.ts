/** Hash routes (#/agents/agt_…): the same files serve every page from S3 and from npm start. */
import { signal } from '@preact/signals';

const current = () => (location.hash.replace(/^#/, '') || '/').split('?')[0]!;
export const route = signal(current());
window.addEventListener('hashchange', () => {
  route.value = current();
});

export function navigate(path: string) {
  location.hash = path;
}

/** Shows `path` in place of the current address, without a new history entry. */
export function replaceRoute(path: string) {
  history.replaceState(null, '', `#${path}`);
  route.value = path;
}

/** The parameters of `pattern` (`/agents/:id`) in `path`, or undefined when it does not match. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i]!.startsWith(':')) params[want[i]!.slice(1)] = decodeURIComponent(got[i]!);
    else if (want[i] !== got[i]) return undefined;
  }
  return params;
}
