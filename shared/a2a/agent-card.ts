import type { AgentCard, AgentSkill } from '@a2a-js/sdk';
import type { Agent } from '../agents';

/** The A2A protocol version Cairn speaks (as the official SDK 1.x does). */
export const A2A_VERSION = '1.0';

const skill = (id: string, name: string, description: string, tags: string[]): AgentSkill => ({ id, name, description, tags, examples: [], inputModes: ['text/plain'], outputModes: ['text/plain', 'application/json'], securityRequirements: [] });

/** What the agent can do, as its card lists it: a conversation, its knowledge, and each of its tools. */
function skillsOf(agent: Agent): AgentSkill[] {
  const tools = (agent.tools ?? []).map((tool) => {
    const described = typeof tool.description === 'string' && tool.description ? tool.description : tool.type === 'openapi' ? `The operations of the ${tool.name} API` : tool.type === 'mcp' ? `The tools of the ${tool.name} MCP server` : tool.name;
    return skill(`tool-${tool.name}`, tool.name, described, ['tool', tool.type]);
  });
  const knowledge = agent.knowledgeSourceIds.length > 0 ? [skill('knowledge', 'Answers from its knowledge', `Answers from ${agent.knowledgeSourceIds.length} knowledge source${agent.knowledgeSourceIds.length === 1 ? '' : 's'}, citing the passages it used`, ['knowledge', 'search'])] : [];
  return [skill('chat', agent.name, agent.description || `Converses as ${agent.name}`, ['chat']), ...knowledge, ...tools];
}

/**
 * The agent's card: who it is, what it can do, where and how it is reached (JSON-RPC and
 * HTTP+JSON at one URL), and the keys it accepts (a tenant's API key, as X-API-Key or bearer).
 */
export function agentCardOf(agent: Agent, endpoint: string): AgentCard {
  return {
    name: agent.name,
    description: agent.description || agent.name,
    supportedInterfaces: [
      { url: endpoint, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_VERSION },
      { url: endpoint, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: A2A_VERSION },
    ],
    provider: { organization: 'Cairn', url: endpoint.replace(/\/a2a\/[^/]+$/, '') },
    version: String(agent.version),
    capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: false },
    securitySchemes: {
      apiKey: { scheme: { $case: 'apiKeySecurityScheme', value: { description: 'A Cairn API key of the agent’s tenant', location: 'header', name: 'X-API-Key' } } },
      bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { description: 'A Cairn API key of the agent’s tenant, as a bearer token', scheme: 'Bearer', bearerFormat: '' } } },
    },
    securityRequirements: [{ schemes: { apiKey: { list: [] } } }, { schemes: { bearer: { list: [] } } }],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: skillsOf(agent),
    signatures: [],
  };
}
