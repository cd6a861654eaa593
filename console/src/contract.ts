import type { components as PlatformComponents } from '../../shared/contract/platform-api';
import type { components } from '../../shared/contract/public-api';

/**
 * The API's shapes as its OpenAPI documents declare them (`npm run openapi` generates
 * shared/contract/ from the same zod schemas that validate requests): the console writes none of
 * its own, so a change to the API that the console does not follow fails its type check.
 */
export type Schemas = components['schemas'];

export type Agent = Schemas['Agent'];
export type AgentTool = NonNullable<Agent['tools']>[number];
export type KnowledgeSource = Schemas['KnowledgeSource'];
export type KnowledgeFile = Schemas['File'];
export type SearchResult = Schemas['SearchResponse']['results'][number];
export type UploadTicket = Schemas['Upload'];
export type Workflow = Schemas['Workflow'];
export type WorkflowStep = Workflow['steps'][number];
export type Execution = Schemas['Execution'];
export type ExecutionStep = Execution['steps'][number];
export type UsageReport = Schemas['UsageReport'];
export type UsageRow = UsageReport['rows'][number];
export type SessionSummary = Schemas['SessionSummary'];
export type SessionMessage = Schemas['SessionMessage'];
export type ConverseResponse = Schemas['ConverseResponse'];
export type PlatformSchemas = PlatformComponents['schemas'];
export type MemoryResult = PlatformSchemas['MemoryResult'];
export type AgentVersion = Schemas['AgentVersion'];
export type Alias = Schemas['AgentAlias'];
export type VersionDiff = Schemas['VersionDiff'];
export type EvalDataset = Schemas['EvalDataset'];
export type EvalCase = Schemas['EvalCase'];
export type EvalRun = Schemas['EvalRun'];
export type EvalResult = Schemas['EvalResult'];
export type Trace = Schemas['Trace'];
export type Run = Schemas['Run'];
export type RunStep = Schemas['RunStep'];
export type ForkedSession = Schemas['ForkedSession'];
