import { collection } from '../collection';
import type { StoredWebhook } from './webhooks';
import type { Workflow } from './workflow-schema';

/** The tenant's workflow records (kept apart from workflows.ts, whose steps' code starting an execution does not need). */
export const workflows = collection<Workflow>('WORKFLOW', 'workflow', 'workflow');

/** A workflow as stored: its webhook's secret sealed. */
export type StoredWorkflow = Omit<Workflow, 'webhook'> & { webhook?: StoredWebhook };
