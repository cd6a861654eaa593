/**
 * Evaluations: how good an agent or workflow is, case by case — datasets of cases and the scorers
 * that need no model; runs come next (issue 30). Everything else in this folder is private.
 */
export { appendCases, appendInput, caseShown, casesOfJsonLines, createDataset, datasetInput, datasetShown, deleteDataset, getDataset, listCases, listDatasets, MAX_CASES, parseAppended } from './datasets';
export { isRefusal, normalizeAnswer, SCORER_NAMES, SCORERS, scoreCase, tokenF1, type Expected, type Observed, type Score, type ScorerName, type ScorerOptions } from './scorers';
