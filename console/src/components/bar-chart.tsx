export interface Series {
  name: string;
  color: string;
  values: number[];
}

/**
 * Vertical stacked bars, one per label (days), drawn as SVG; the numbers are also in a table for
 * screen readers and copying.
 */
export function BarChart({ title, labels, series }: { title: string; labels: string[]; series: Series[] }) {
  const totals = labels.map((_, i) => series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  const max = Math.max(1, ...totals);
  const W = 640;
  const H = 200;
  const left = 48;
  const right = 16;
  // Room above the top grid line for its number.
  const padTop = 12;
  const bottom = 28;
  const slot = (W - left - right) / Math.max(1, labels.length);
  const bar = Math.max(2, Math.min(36, slot * 0.7));
  const y = (v: number) => padTop + (H - bottom - padTop) * (1 - v / max);
  // A month of days: month-day only, so the labels do not run into each other.
  const short = (label: string) => (labels.length > 7 && /^\d{4}-\d{2}-\d{2}$/.test(label) ? label.slice(5) : label);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} width="100%" role="img" aria-label={`${title}: ${labels.map((l, i) => `${l} ${totals[i]}`).join(', ')}`}>
        {[0, 0.5, 1].map((f) => (
          <g key={f}>
            <line x1={left} x2={W - right} y1={y(f * max)} y2={y(f * max)} class="grid" />
            <text x={left - 6} y={y(f * max) + 4} text-anchor="end" class="axis">
              {compact(f * max)}
            </text>
          </g>
        ))}
        {labels.map((label, i) => {
          let base = 0;
          const x = left + i * slot + (slot - bar) / 2;
          return (
            <g key={label}>
              {series.map((s) => {
                const v = s.values[i] ?? 0;
                const top = y(base + v);
                const h = y(base) - top;
                base += v;
                return v > 0 ? <rect key={s.name} x={x} y={top} width={bar} height={h} fill={s.color} /> : null;
              })}
              {labels.length <= 16 || i % Math.ceil(labels.length / 12) === 0 ? (
                <text x={x + bar / 2} y={H - 10} text-anchor="middle" class="axis">
                  {short(label)}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
      {series.length > 1 ? (
        <ul class="legend">
          {series.map((s) => (
            <li key={s.name}>
              <span class="swatch" style={{ background: s.color }} aria-hidden="true" /> {s.name}
            </li>
          ))}
        </ul>
      ) : null}
    </figure>
  );
}

/** Horizontal bars: one per group (agent, model), longest first. */
export function RankChart({ title, rows }: { title: string; rows: Array<{ label: string; value: number }> }) {
  const max = Math.max(1, ...rows.map((r) => r.value));
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      {rows.length === 0 ? <p class="muted">Nothing yet.</p> : null}
      <ul class="rank" aria-label={title}>
        {rows.map((r) => (
          <li key={r.label}>
            <span class="rank-label">{r.label}</span>
            <span class="rank-bar" style={{ width: `${(r.value / max) * 100}%` }} aria-hidden="true" />
            <span class="rank-value">{r.value.toLocaleString()}</span>
          </li>
        ))}
      </ul>
    </figure>
  );
}

export function compact(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(Math.round(n));
}
