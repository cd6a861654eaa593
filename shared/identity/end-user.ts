import { z } from '@hono/zod-openapi';

/**
 * The person a request acts for: their id and groups, and whether Cairn verified them (from the
 * tenant's identity provider's token, `X-End-User-Token`) or took the trusted caller's word
 * (`context.userId`, `context.groups`).
 */
export interface EndUser {
  id: string;
  groups: string[];
  verified: boolean;
  /** Named by data (a workflow step's `userId`, an evaluation case's `context`), not by the caller: never uses their connected accounts. */
  named?: boolean;
}

/** An end user's id: what `context.userId` and a token's user claim must be. */
export const END_USER_ID = /^[^/\s]{1,200}$/;

/** A group name as a token or a caller gives it. */
export const GROUP_NAME = /^[^\s]{1,200}$/;
export const MAX_GROUPS = 200;

/** `context.groups` as requests take it. */
export const groupsInput = z
  .array(z.string().regex(GROUP_NAME, { error: 'must be 1–200 characters, no space' }))
  .max(MAX_GROUPS)
  .optional();

/** The end user as tool policies and workflow templates see it: always there, id null without one. */
export const userView = (user: EndUser | undefined) => ({ id: user?.id ?? null, groups: user?.groups ?? [], verified: user?.verified ?? false, ...(user?.named ? { named: true } : {}) });

/** The end user a view names (a workflow's `user`), none when its id is null. */
export const endUserOfView = (view: { id: string | null; groups?: string[]; verified?: boolean; named?: boolean } | undefined): EndUser | undefined =>
  view?.id ? { id: view.id, groups: view.groups ?? [], verified: view.verified ?? false, ...(view.named ? { named: true } : {}) } : undefined;

/** The end user as a turn's input and kept state carry it: `userId`, and groups and verification when there are any. */
export const turnUser = (user: EndUser | undefined): { userId?: string; userGroups?: string[]; userVerified?: boolean; userNamed?: boolean } =>
  user ? { userId: user.id, ...(user.groups.length ? { userGroups: user.groups } : {}), ...(user.verified ? { userVerified: true } : {}), ...(user.named ? { userNamed: true } : {}) } : {};

/** The end user a turn's input or kept state carries (as `turnUser` wrote it). */
export const userOfTurn = (from: { userId?: string; userGroups?: string[]; userVerified?: boolean; userNamed?: boolean }): EndUser | undefined =>
  from.userId ? { id: from.userId, groups: from.userGroups ?? [], verified: from.userVerified === true, ...(from.userNamed ? { named: true } : {}) } : undefined;
