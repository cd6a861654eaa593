/**
 * Evaluations: how good an agent or workflow is, case by case. So far the scorers that need no
 * model; datasets and runs come next (issue 30). Everything else in this folder is private.
 */
export { isRefusal, normalizeAnswer, SCORER_NAMES, SCORERS, scoreCase, tokenF1, type Expected, type Observed, type Score, type ScorerName, type ScorerOptions } from './scorers';
