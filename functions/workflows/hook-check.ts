// What hook authentication loads with the first hook request: named here so that loading it with
// import() takes this, not all the workflows room exports.
export { authenticateHook } from '../../shared/workflows';
