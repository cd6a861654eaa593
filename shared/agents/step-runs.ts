import type { AgentRuns } from '../runtime';
import { ENDED_RUN_STATUSES, type RunRecord } from '../store/runs';
import { agentAddress } from './agent-releases';
import { cancelRun, createRun, getRun } from './runs';

/**
 * Background runs for workflow `agent` steps with `background: true`: the step starts a run and
 * waits without holding a worker; the run's end sends the step's message again (`parent`), and
 * the step settles from the run's outcome.
 */
export const agentRuns: AgentRuns = {
  async start(rt, scope, address, input) {
    const { agentId, target } = agentAddress(address, 'agentId');
    const { parent, fallbackModels, ...converse } = input;
    const run = await createRun(rt, scope, agentId, { converse: { ...converse, target, ...(fallbackModels ? { fallbackModels } : {}) }, maxToolSteps: 20, maxDurationSeconds: 900, parent });
    return { agentId: run.agentId, runId: run.id, sessionId: run.sessionId };
  },
  async state(rt, scope, agentId, runId) {
    const run = await getRun(rt, scope, agentId, runId);
    if (!ENDED_RUN_STATUSES.has(run.status)) return { ended: false, status: run.status };
    if (run.status !== 'completed') return { ended: true, status: run.status, error: run.error ?? { code: run.status === 'expired' ? 'EXPIRED' : 'CANCELED', message: `Run ${run.id} ${run.status}` } };
    return { ended: true, status: 'completed', result: resultOf(run) };
  },
  async cancel(rt, scope, agentId, runId) {
    const run = await getRun(rt, scope, agentId, runId);
    if (!ENDED_RUN_STATUSES.has(run.status)) await cancelRun(rt, scope, agentId, runId).catch(() => undefined);
  },
};

function resultOf(run: RunRecord) {
  return {
    status: 'completed' as const,
    runId: run.id,
    agentId: run.agentId,
    sessionId: run.sessionId,
    reply: run.reply ?? '',
    model: run.model ?? '',
    agentVersion: run.agentVersion ?? 'draft',
    sources: run.sources ?? [],
    usage: { inputTokens: run.usage.inputTokens, outputTokens: run.usage.outputTokens },
    ...(run.output !== undefined ? { output: run.output } : {}),
  };
}
