/**
 * Usage metering and token budgets, for every product. Everything else in this folder is private.
 */
export { budgetAfter, keyBudgetOf, resolveForTenant, setKeyBudget, setTokenBudget, type KeyBudget, type TokenBudget, tokenBudgetOf } from './token-budget';
export { costOfTokens, recordUsage, totalCost } from './usage';
export { usageBetween, usageQuery, usageReport } from './usage-report';
export { modelTally, tallied, talliesSince, tallyCall, type ModelTallies, type ModelTally } from './model-tally';
