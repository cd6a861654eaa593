/**
 * Tool definitions and the kinds that call out (http, openapi, mcp): what agents expose to models
 * and workflow `tool` steps call. Everything else in this folder is private.
 */
export { a2aToolInput, type A2aToolDefinition, type AgentToolDefinition, type CodeToolDefinition, httpInput, type KnowledgeSearchDefinition, mcpInput, openApiInput, type StoredTool, type ToolInput, toolOutput, toolsInput, type WorkflowDefinition } from './definitions';
export { REMOTE_TOOL_KINDS, remoteKindOf } from './remote-tools';
export { AuthorizationRequired, authInput, hasSecret, sealAuth, showAuth, type StoredAuth, toolAuthorization } from './tool-auth';
export { prepareTool, presentTool, runTool, type ToolCallOptions, toolContext, type ToolOutcome, toolsOf } from './tool-calls';
export { type CallableTool, type ToolContext, type ToolKind, type RequiredAction, type ToolReply, type ToolResume, type ToolWait } from './tool-kind';
export { assertCallAllowed, type CallContext, type CallDecision, decideCall, policyInput, policyIssues, type PolicyRule } from './tool-policy';
export { mcpJsonSchemaValidator } from './mcp-validator';
