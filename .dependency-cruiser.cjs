/**
 * The layering rules of the product code (`npm run lint`). Each top-level folder's README says
 * what lives there and what it may import.
 */
const KERNEL = '^shared/(config|errors|ids|tenancy|log|json-objects|json-guard|plans|validation|each-limited|templates|jsonata-expression|clock|bounded-cache|work-frame|source-stack)[.]ts$';
/** Folders of `shared/` with a front door (`index.ts`): the three products and what they share. */
const ROOMS = 'agents|knowledge|workflows|tools|usage|evals|guardrails|identity';
/** Tests and benchmarks may reach inside a room: they exercise its parts one by one. */
const TESTS = '^(test|bench)/|[.]test[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'dynamodb-only-in-store',
      comment: 'Only shared/store/ talks to DynamoDB: everything else goes through the entity stores.',
      severity: 'error',
      // The client benchmark measures the SDK's clients beside the store's own.
      from: { pathNot: ['^shared/store/', '^bench/dynamo-client\\.ts$'] },
      to: { path: '^node_modules/@aws-sdk/(client-dynamodb|lib-dynamodb|util-dynamodb)/' },
    },
    {
      name: 'domain-not-http',
      comment: 'Domain code knows nothing of HTTP: handlers parse and shape, the domain decides.',
      severity: 'error',
      from: { path: `^shared/(${ROOMS}|memory|platform|search|models)/` },
      to: { path: '^shared/http/' },
    },
    {
      name: 'store-imports-only-the-kernel',
      comment: 'The store depends on the kernel (config, errors, ids, tenancy, log) and on itself only.',
      severity: 'error',
      from: { path: '^shared/store/' },
      to: { path: '^shared/', pathNot: [KERNEL, '^shared/store/'] },
    },
    {
      name: 'kernel-imports-only-the-kernel',
      comment: 'The kernel (config, errors, ids, …) is what everything else stands on: it stands on nothing of the product.',
      severity: 'error',
      from: { path: KERNEL },
      to: { path: '^(shared|functions|local|infra)/', pathNot: KERNEL },
    },
    {
      name: 'store-keys-only-in-the-store',
      comment: 'How a key is built is the store’s to know: everything else names records through the entity stores.',
      severity: 'error',
      from: { pathNot: ['^shared/store/', TESTS] },
      to: { path: '^shared/store/keys[.]ts$' },
    },
    {
      name: 'functions-not-the-store',
      comment: 'Handlers call domain functions; only the domain (and the adapters that build a runtime) reach the store.',
      severity: 'error',
      from: { path: '^functions/', pathNot: TESTS },
      to: { path: '^shared/store/' },
    },
    {
      name: 'shared-not-the-edges',
      comment: 'Product code never imports a function group, the local server or the CDK app: they are built on it.',
      severity: 'error',
      from: { path: '^shared/' },
      to: { path: '^(functions|local|infra)/' },
    },
    {
      name: 'rooms-through-their-front-door',
      comment: 'A room’s internals are private: from outside, import what its index.ts exports.',
      severity: 'error',
      from: { pathNot: [`^shared/(${ROOMS})/`, TESTS] },
      to: { path: `^shared/(${ROOMS})/`, pathNot: `^shared/(${ROOMS})/index[.]ts$` },
    },
    {
      name: 'rooms-meet-at-the-front-door',
      comment: 'One room reaches another only through that room’s index.ts.',
      severity: 'error',
      from: { path: `^shared/(${ROOMS})/`, pathNot: TESTS },
      to: { path: `^shared/(${ROOMS})/`, pathNot: ['^shared/$1/', `^shared/(${ROOMS})/index[.]ts$`] },
    },
    {
      name: 'no-circular',
      comment: 'No module may reach itself through its imports.',
      severity: 'error',
      from: { pathNot: ['^(test|bench)/', '[.]test[.]ts$'] },
      to: { circular: true },
    },
    {
      name: 'product-not-from-tests',
      comment: 'Product code never imports tests, benchmarks or the team handouts beside the checkout.',
      severity: 'error',
      from: { path: '^(shared|functions|infra|local)/', pathNot: '[.]test[.]ts$' },
      to: { path: '^(test|bench)/|^[.][.]/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(cdk[.]out|[.]data)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
