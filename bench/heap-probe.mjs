/**
 * Preloaded into the soak's server (`--expose-gc --import ./bench/heap-probe.mjs`; plain
 * JavaScript, as Node loads it before tsx): every HEAP_PROBE_MS it collects garbage fully and
 * prints what the heap still holds, so the soak can tell memory the process keeps (a leak, a cache
 * filling) from memory V8 and the allocator have not given back. Bench only: the product never
 * loads it.
 */
const every = Number(process.env.HEAP_PROBE_MS ?? 10_000);
const collect = globalThis.gc;
if (collect) {
  setInterval(() => {
    collect();
    const m = process.memoryUsage();
    const mb = (bytes) => Math.round(bytes / 104_857.6) / 10;
    process.stderr.write(`HEAP ${JSON.stringify({ heapUsedMb: mb(m.heapUsed), externalMb: mb(m.external), arrayBuffersMb: mb(m.arrayBuffers), rssMb: mb(m.rss) })}\n`);
  }, every).unref();
}
