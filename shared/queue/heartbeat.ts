/**
 * Runs `work` while calling `beat` every `everyMs`, one call at a time, and waits for the last
 * call before it returns (what comes next may depend on it: a receipt, a lease). `beat` handles
 * its own failures. Keeps a queue message invisible, or a step's lease alive, while work runs.
 */
export async function withHeartbeat<T>(beat: () => Promise<void>, everyMs: number, work: () => Promise<T>): Promise<T> {
  let beating = Promise.resolve();
  const timer = setInterval(() => {
    beating = beating.then(beat);
  }, everyMs);
  timer.unref();
  try {
    return await work();
  } finally {
    clearInterval(timer);
    await beating;
  }
}
