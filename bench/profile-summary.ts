/**
 * A V8 CPU profile (`--cpu-prof`, e.g. from `BENCH_PROFILE=<dir> npx tsx bench/api.ts`) as the
 * figures that say where the time goes: self time by package (our code by its folder: shared/search,
 * functions/agents…; dependencies by package; Node's internals apart) and the heaviest of our
 * functions by inclusive time. Writes bench/results/profile-<name>.json, the summary the CPU work
 * of issue 34 is guided by.
 * Usage: npx tsx bench/profile-summary.ts <file.cpuprofile | dir> <name>
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeResults } from './common';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [target, name] = process.argv.slice(2);
if (!target || !name) throw new Error('usage: tsx bench/profile-summary.ts <file.cpuprofile | dir> <name>');
// A directory: its largest profile (the server's, not a short-lived helper's).
const file = statSync(target).isDirectory()
  ? readdirSync(target)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => join(target, f))
      .sort((a, b) => statSync(b).size - statSync(a).size)[0]!
  : target;
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

/** Where a frame's code is from: our folder, a package, or Node itself. */
function placeOf(url: string, functionName: string): string {
  if (!url) return `(${functionName || 'native'})`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const ours = /\/(shared|functions|local)\/([^/]+)/.exec(url);
  if (ours) return `${ours[1]}/${ours[2]!.replace(/\.ts$/, '')}`;
  return url.startsWith('node:') ? url : `node:${url.replace(/^.*\//, '')}`;
}

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  total += dt;
  self.set(id, (self.get(id) ?? 0) + dt);
});
const inclusive = new Map<number, number>();
const inclusiveOf = (id: number): number => {
  const known = inclusive.get(id);
  if (known !== undefined) return known;
  const node = byId.get(id)!;
  const value = (self.get(id) ?? 0) + (node.children ?? []).reduce((sum, child) => sum + inclusiveOf(child), 0);
  inclusive.set(id, value);
  return value;
};

const byPlace = new Map<string, number>();
for (const [id, time] of self) {
  const { url, functionName } = byId.get(id)!.callFrame;
  const place = placeOf(url, functionName);
  byPlace.set(place, (byPlace.get(place) ?? 0) + time);
}
// Our functions by the time spent in them and below (each function once: its largest call site).
const ourFunctions = new Map<string, number>();
for (const node of profile.nodes) {
  const { url, functionName } = node.callFrame;
  if (!/\/(shared|functions|local)\//.test(url) || url.includes('node_modules') || !functionName) continue;
  // Line numbers are the transpiled code's (tsx): the file says where.
  const key = `${functionName} (${/\/((?:shared|functions|local)\/.+)$/.exec(url)?.[1] ?? url})`;
  ourFunctions.set(key, Math.max(ourFunctions.get(key) ?? 0, inclusiveOf(node.id)));
}
const ms = (us: number) => Math.round(us / 100) / 10;
const share = (us: number) => Math.round((1000 * us) / total) / 10;
writeResults(`profile-${name}`, {
  date: new Date().toISOString(),
  profile: file.replace(/^.*\//, ''),
  sampledMs: ms(total),
  selfByPlace: [...byPlace].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([place, us]) => ({ place, ms: ms(us), pct: share(us) })),
  ourHeaviestFunctions: [...ourFunctions].sort((a, b) => b[1] - a[1]).slice(0, 30).map(([fn, us]) => ({ fn, inclusiveMs: ms(us), pct: share(us) })),
});
