/**
 * Guardrails: personal data kept from model providers (tokenized, masked or refused), denied
 * topics and blocked words, checked replies and tool results, found locally and deterministically.
 * Everything else in this folder is private.
 */
export { Guard, type Finding } from './guard';
export { guardedModel } from './guarded-model';
export { findPii, PII_ENTITIES, type PiiEntity, type PiiMatch } from './pii';
export { DEFAULT_BLOCKED_MESSAGE, effectiveGuardrails, guardrailsInput, type Guardrails } from './settings';
export { openVault, restoreTokens, saveVault } from './vault';
export { setTenantGuardrails, tenantGuardrails } from './tenant-default';
