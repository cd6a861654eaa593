/** The bench's server processes: started as children, measured from /proc, fed generated documents. */
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Starts `node --import tsx <args>` and resolves once its output matches `ready`. */
export async function startChild(args: string[], env: Record<string, string>, ready: RegExp, nodeFlags: string[] = []): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', ...args], {
    env: { ...process.env, NODE_NO_WARNINGS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const check = (d: Buffer) => {
      out += d.toString();
      if (ready.test(out)) resolve();
    };
    child.stdout.on('data', check);
    child.stderr.on('data', check);
    child.once('exit', (code) => reject(new Error(`${args[0]} exited ${code}:\n${out}`)));
  });
  child.stdout.resume();
  return child;
}

/** CPU time (user + system) a process has used so far, in ms (Linux: /proc/<pid>/stat). */
const TICKS_PER_SECOND = Number(execSync('getconf CLK_TCK').toString().trim()) || 100;
export function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // After "pid (comm) ", utime and stime are the 12th and 13th fields.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** Words for the benchmark's documents and questions: enough variety for realistic postings. */
const WORDS = 'parcel delivery refund invoice warranty battery charger screen repair store opening hours return policy exchange shipping express standard tracking number account password reset login email address payment card bank transfer discount voucher gift order cancel damaged missing item size colour stock pickup'.split(' ');
export function document(i: number): string {
  let seed = i * 7919 + 13;
  const word = () => WORDS[(seed = (seed * 48271) % 2147483647) % WORDS.length]!;
  const sentences = Array.from({ length: 12 }, () => `${Array.from({ length: 14 }, word).join(' ')}.`);
  return `# ${word()} ${word()} ${i}\n\n${sentences.join(' ')}`;
}

/** Resident memory of a process, in MB (Linux: VmRSS in /proc/<pid>/status). */
export function rssMbOf(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return Math.round(kb / 102.4) / 10;
}
