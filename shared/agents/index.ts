/**
 * Agents: their definitions, conversations (turns, tool rounds, approvals), sessions, and the tools
 * only agents have (knowledge search, workflows). Everything else in this folder is private.
 */
export { agent, type Agent, agentInput, storedAgent } from './agent-schema';
export { agents, createAgent, deleteAgent, patchAgent, presentAgent, replaceAgent } from './agents';
export { agentTurn, converse, type ConverseInput, type ConverseResult, converseStream, type Exchange } from './turn';
export { continuedExchange, deleteExchange, type ExchangeAddress, sessionHasTurns, storedReply, type StoredReply } from './exchanges';
export { converseSource } from './grounding';
export { consumeMemoryMessage } from './turn-memory';
export { approveRun, cancelRun, createRun, nextRunChange, rerunRun, failLostRun, followRun, RUN_STATUSES, type Run, getRun, lastUserMessage, listRuns, presentRun, resumeAuthorizedRun, runEventsAfter, runOfResponse, runSettings, runSteps, sendRunStep, type RunInput } from './runs';
export { consumeRunMessage } from './run-steps';
export { isInterrupted, isTerminal, statusesOf, taskOf, textOf, replyArtifact, statusMessageOf, taskStateOf } from './run-task';
export { agentAddress, agentReleases } from './agent-releases';
export { connectKnowledgeSource, removeKnowledgeSource } from './knowledge-links';
export { deleteAgentSession, listAgentSessions, listSessionMessages } from './sessions';
export { forkSession } from './session-fork';
export { agentRuns } from './step-runs';
export { assistantMessage, feedbackInput, rateMessage } from './feedback';
export { END_USER_ID, endUserErased, endUserExport, eraseEndUser, exportEndUser } from './end-users';
