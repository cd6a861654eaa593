/**
 * The layering rules of the product code (`npm run lint`). Each top-level folder's README says
 * what lives there and what it may import.
 */
const KERNEL = '^shared/(config|errors|ids|tenancy|log|json-objects|json-guard|plans|validation|each-limited)[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'dynamodb-only-in-store',
      comment: 'Only shared/store/ talks to DynamoDB: everything else goes through the entity stores.',
      severity: 'error',
      from: { pathNot: ['^shared/store/'] },
      to: { path: '^node_modules/@aws-sdk/(client-dynamodb|lib-dynamodb|util-dynamodb)/' },
    },
    {
      name: 'domain-not-http',
      comment: 'Domain code knows nothing of HTTP: handlers parse and shape, the domain decides.',
      severity: 'error',
      from: { path: '^shared/(domain|memory|platform|search)/' },
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
