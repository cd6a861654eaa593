import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ApiStack } from './stacks/api-stack';
import { ConsoleStack } from './stacks/console-stack';
import { DataStack } from './stacks/data-stack';
import { acknowledgeReviewedFindings } from './nag-suppressions';

/** Builds Cairn's stacks; `cdk synth` and the tests both call it. */
export function buildApp(app = new App()) {
  const data = new DataStack(app, 'CairnData', { description: 'Cairn: table and work queues (stateful)' });
  const api = new ApiStack(app, 'CairnApi', {
    description: 'Cairn: REST API and functions',
    data: data.data,
    ingestion: data.ingestion,
    workflowSteps: data.workflowSteps,
    webhooks: data.webhooks,
    files: data.files,
    secretsKey: data.secretsKey,
    providerKeys: data.providerKeys,
    platformAdminToken: data.platformAdminToken,
    platformTokenKey: data.platformTokenKey,
    cursorKey: data.cursorKey,
    alarms: data.alarms,
  });
  acknowledgeReviewedFindings(api);
  // The web console, unless `-c console=false`.
  const console = app.node.tryGetContext('console') === 'false' || app.node.tryGetContext('console') === false ? undefined : new ConsoleStack(app, 'CairnConsole', { description: 'Cairn: web console (CloudFront + S3)', api: api.api });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return { app, data, api, console };
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  buildApp().app.synth();
}
