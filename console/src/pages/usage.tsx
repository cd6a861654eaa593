import { useState } from 'preact/hooks';
import { api, apiAll } from '../api';
import { BarChart, RankChart } from '../components/bar-chart';
import { ErrorBox, FieldError, Loading, Stats, Table, useLoad } from '../components/ui';
import type { Agent, UsageReport, UsageRow } from '../contract';

type Report = UsageReport;

/** A cost in USD; none where a model in it has no price in MODEL_PRICES. */
const costOf = (usd: number | null) => (usd === null ? 'no price' : `$${usd.toFixed(4)}`);

const today = () => new Date().toISOString().slice(0, 10);
const monthStart = () => `${today().slice(0, 8)}01`;

/** Every day of [from, to], so days without use show as empty bars, not as gaps closed up. */
function daysOf(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = new Date(`${from}T00:00:00Z`); d <= new Date(`${to}T00:00:00Z`) && out.length < 400; d.setUTCDate(d.getUTCDate() + 1)) out.push(d.toISOString().slice(0, 10));
  return out;
}

export function UsagePage() {
  const [from, setFrom] = useState(monthStart());
  const [to, setTo] = useState(today());
  const [range, setRange] = useState({ from: monthStart(), to: today() });
  const q = `from=${range.from}&to=${range.to}`;
  const data = useLoad(
    async (signal) => {
      const [byDay, byAgent, byModel, agents] = await Promise.all([
        api<Report>('GET', `/v1/usage?${q}&groupBy=day`, undefined, signal),
        api<Report>('GET', `/v1/usage?${q}&groupBy=agent`, undefined, signal),
        api<Report>('GET', `/v1/usage?${q}&groupBy=model`, undefined, signal),
        apiAll<Agent>('/v1/agents'),
      ]);
      return { byDay, byAgent, byModel, names: new Map(agents.map((a) => [a.id, a.name])) };
    },
    [q],
  );
  const v = data.value;
  const days = v ? daysOf(v.byDay.from, v.byDay.to) : [];
  const on = (day: string) => v?.byDay.rows.find((r) => r.group === day);
  return (
    <section>
      <div class="page-head">
        <h1>Usage</h1>
      </div>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          setRange({ from, to });
        }}
      >
        <label for="usage-from">From</label>
        <input id="usage-from" type="date" value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
        <label for="usage-to">To</label>
        <input id="usage-to" type="date" value={to} onInput={(e) => setTo(e.currentTarget.value)} />
        <button type="submit">Show</button>
      </form>
      <FieldError error={data.error} field="from" />
      <FieldError error={data.error} field="to" />
      <ErrorBox error={data.error} />
      {data.loading && !v ? <Loading what="usage" /> : null}
      {v ? (
        <>
          <Stats
            items={[
              ['Requests', v.byDay.totals.requests.toLocaleString()],
              ['Input tokens', v.byDay.totals.inputTokens.toLocaleString()],
              ['Output tokens', v.byDay.totals.outputTokens.toLocaleString()],
              ['Tool calls', v.byDay.totals.toolCalls.toLocaleString()],
              ['Workflow steps', v.byDay.totals.steps.toLocaleString()],
              ['Estimated cost', costOf(v.byDay.totals.estimatedCostUsd)],
            ]}
          />
          {v.byDay.rows.length === 0 ? <p class="muted">No use in this period yet: converse with an agent, search a source or run a workflow, and it counts here.</p> : null}
          <div class="split">
            <BarChart title="Requests per day" labels={days} series={[{ name: 'Requests', color: '#245d52', values: days.map((d) => on(d)?.requests ?? 0) }]} />
            <BarChart
              title="Tokens per day"
              labels={days}
              series={[
                { name: 'Input tokens', color: '#245d52', values: days.map((d) => on(d)?.inputTokens ?? 0) },
                { name: 'Output tokens', color: '#b4581e', values: days.map((d) => on(d)?.outputTokens ?? 0) },
              ]}
            />
          </div>
          <div class="split">
            <RankChart
              title="Tokens per agent"
              rows={v.byAgent.rows
                .filter((r) => r.group !== '-')
                .map((r) => ({ label: v.names.get(r.group) ?? r.group, value: r.inputTokens + r.outputTokens }))
                .sort((a, b) => b.value - a.value)}
            />
            <RankChart
              title="Tokens per model"
              rows={v.byModel.rows
                .filter((r) => r.group !== '-')
                .map((r) => ({ label: r.group, value: r.inputTokens + r.outputTokens }))
                .sort((a, b) => b.value - a.value)}
            />
          </div>
          <h2>Per agent</h2>
          <UsageTable rows={v.byAgent.rows} name={(g) => (g === '-' ? '(no agent)' : (v.names.get(g) ?? g))} />
          <h2>Per model</h2>
          <UsageTable rows={v.byModel.rows} name={(g) => (g === '-' ? '(no model)' : g)} />
        </>
      ) : null}
    </section>
  );
}

function UsageTable({ rows, name }: { rows: UsageRow[]; name: (group: string) => string }) {
  if (rows.length === 0) return <p class="muted">Nothing in this period.</p>;
  return (
    <Table columns={['Group', 'Requests', 'Input tokens', 'Output tokens', 'Tool calls', 'Searches', 'Cost (USD)']}>
      {rows.map((r) => (
        <tr key={r.group}>
          <td>{name(r.group)}</td>
          <td>{r.requests}</td>
          <td>{r.inputTokens}</td>
          <td>{r.outputTokens}</td>
          <td>{r.toolCalls}</td>
          <td>{r.searches}</td>
          <td>{r.estimatedCostUsd === null ? 'no price' : r.estimatedCostUsd.toFixed(4)}</td>
        </tr>
      ))}
    </Table>
  );
}
