// What the MCP tools call, loaded with the first tool call (initialize and tools/list need none
// of it): named here so that loading it with import() takes these, not all the rooms' exports.
export { agentAddress, agents, converse, createRun, getRun } from '../../shared/agents';
export { knowledgeSources, searchKnowledgeSource } from '../../shared/knowledge';
export { executeAndWait, getExecution, listWorkflows } from '../../shared/workflows';
