import { ValidationError } from '../errors';
import type { Runtime } from '../runtime';
import type { TenantScope } from '../tenancy';
import type { EndUser } from './end-user';
import { endUserAuthOf } from './end-user-auth';

/**
 * Who acts, decided once: a request's end user is built at the edge (`endUserOf`: a verified token,
 * or the API-key caller's claim where the tenant takes claims) and carried. Work that names a user
 * itself — an evaluation case's `context`, a workflow `agent` step's `userId` — makes a claim the
 * tenant must take too: where it requires verified users, such a field is refused when written
 * and, if the setting changed since, the work runs for nobody and says so. A user named by data
 * (`named`) never uses their connected accounts: only a verified user, or one the caller claims
 * where claims are taken, does.
 */
const REQUIRED = 'this tenant requires verified end users (PUT /platform/end-user-auth has required: true)';

/** Why the tenant takes no claimed end user (one no token verified), or undefined where it does. */
export async function claimsRefused(rt: Runtime, scope: TenantScope): Promise<string | undefined> {
  return (await endUserAuthOf(rt, scope))?.required ? REQUIRED : undefined;
}

/** For a field that names an end user by claim, as it is written: a 400 naming it where the tenant requires verified users. */
export async function assertClaimAllowed(rt: Runtime, scope: TenantScope, field: string): Promise<void> {
  const refused = await claimsRefused(rt, scope);
  if (refused) throw new ValidationError(field, `names an end user by claim, but ${refused}: only an X-End-User-Token names one here`);
}

/** The end user work may act for: a verified one always, a claimed one where the tenant takes claims; else nobody, and why. */
export async function admittedUser(rt: Runtime, scope: TenantScope, user: EndUser | undefined): Promise<{ user?: EndUser; refused?: string }> {
  if (!user || user.verified) return user ? { user } : {};
  const refused = await claimsRefused(rt, scope);
  return refused ? { refused: `acted for nobody, not the claimed end user: ${refused}` } : { user };
}

/** The user work names itself (a step's `userId`, a case's `context`): named, never verified, and only where the tenant takes claims; else nobody, and why. */
export async function namedUser(rt: Runtime, scope: TenantScope, id: string, groups: string[] = []): Promise<{ user?: EndUser; refused?: string }> {
  const refused = await claimsRefused(rt, scope);
  return refused ? { refused } : { user: { id, groups, verified: false, named: true } };
}

/** Why a call may not use the end user's connected accounts (OAuth tokens), or undefined when it may. */
export async function connectionsRefused(rt: Runtime, scope: TenantScope, user: EndUser): Promise<string | undefined> {
  if (user.verified) return undefined;
  if (user.named) return 'the end user was named by a workflow step or an evaluation case, not verified or claimed by the caller: their connected accounts are not used';
  const refused = await claimsRefused(rt, scope);
  return refused ? `the end user is not verified and ${refused}` : undefined;
}
