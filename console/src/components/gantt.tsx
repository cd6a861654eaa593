export interface TimedStep {
  id: string;
  type: string;
  status: string;
  startedAt?: string;
  finishedAt?: string;
  durationMs?: number;
}

/**
 * An execution's timeline: one bar per step from its start to its end (or to now while it runs or
 * waits), on a shared time axis from the execution's start.
 */
export function Gantt({ steps, startedAt, now }: { steps: TimedStep[]; startedAt: string; now: number }) {
  const t0 = Date.parse(startedAt);
  const rows = steps.map((s) => {
    const start = s.startedAt ? Date.parse(s.startedAt) - t0 : undefined;
    const end = s.finishedAt ? Date.parse(s.finishedAt) - t0 : s.startedAt ? now - t0 : undefined;
    return { ...s, start, end };
  });
  const span = Math.max(1, ...rows.map((r) => r.end ?? 0));
  const LABEL = 150;
  const WIDTH = 560;
  const ROW = 26;
  const x = (ms: number) => LABEL + (ms / span) * (WIDTH - LABEL - 70);
  const height = rows.length * ROW + 24;
  return (
    <figure class="gantt">
      <svg viewBox={`0 0 ${WIDTH} ${height}`} width={WIDTH} role="img" aria-labelledby="gantt-title">
        <title id="gantt-title">Step timeline: {rows.map((r) => `${r.id} ${r.status}${r.end !== undefined && r.start !== undefined ? ` ${Math.round(r.end - r.start)} ms` : ''}`).join(', ')}</title>
        {[0, 0.25, 0.5, 0.75, 1].map((f) => (
          <g key={f}>
            <line x1={x(f * span)} x2={x(f * span)} y1={0} y2={height - 18} class="grid" />
            <text x={x(f * span)} y={height - 4} text-anchor="middle" class="axis">
              {formatMs(f * span)}
            </text>
          </g>
        ))}
        {rows.map((r, i) => (
          <g key={r.id} transform={`translate(0,${i * ROW})`}>
            <text x={LABEL - 8} y={17} text-anchor="end" class="gantt-label">
              {r.id}
            </text>
            {r.start !== undefined && r.end !== undefined ? (
              <>
                <rect x={x(r.start)} y={5} width={Math.max(2, x(r.end) - x(r.start))} height={16} rx="3" class={`bar bar-${r.status}`} />
                <text x={x(r.end) + 5} y={17} class="gantt-duration">
                  {formatMs(r.end - r.start)}
                </text>
              </>
            ) : (
              <text x={LABEL} y={17} class="gantt-duration">
                {r.status}
              </text>
            )}
          </g>
        ))}
      </svg>
    </figure>
  );
}

export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}
