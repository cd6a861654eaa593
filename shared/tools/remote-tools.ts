import type { StoredTool, ToolInput } from './definitions';
import { a2aTool } from './a2a-tool';
import { httpTool } from './http-tool';
import { mcpTool } from './mcp-tool';
import { openApiTool } from './openapi-tool';
import type { ToolKind } from './tool-kind';

/** The kinds of tool that call out to a URL (agents have them; workflow `tool` steps call them). */
export const REMOTE_TOOL_KINDS = { http: httpTool, openapi: openApiTool, mcp: mcpTool, a2a: a2aTool } as const;

export const remoteKindOf = (type: string): ToolKind<ToolInput, StoredTool> => REMOTE_TOOL_KINDS[type as keyof typeof REMOTE_TOOL_KINDS];
