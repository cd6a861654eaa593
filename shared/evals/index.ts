/**
 * Evaluations: how good an agent or workflow is, case by case — datasets of cases, runs that
 * score an agent on them through the steps queue, and the scorers that need no model. Everything else in this folder is private.
 */
export { type AppendInput, appendCases, appendInput, caseShown, casesOfJsonLines, createDataset, datasetInput, datasetShown, getDataset, listCases, listDatasets, MAX_CASES, casesOfAppend } from './datasets';
export { cancelRun, consumeEvalCase, getRun, listResults, listRuns, removeDataset, resultShown, runInput, runShown, startRun } from './runs';
export { isRefusal, normalizeAnswer, SCORER_NAMES, SCORERS, scoreCase, tokenF1, type Expected, type Observed, type Score, type ScorerName, type ScorerOptions } from './scorers';
