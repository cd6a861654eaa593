import { Validations, type Stack } from 'aws-cdk-lib';

/**
 * cdk-nag findings that were reviewed and accepted, each with its reason. Anything not listed
 * here fails `cdk synth` and the infra test.
 */
export function acknowledgeReviewedFindings(api: Stack): void {
  const findings = [
    {
      id: 'AwsSolutions-APIG3',
      reason: 'WAFv2 is an account-level choice with its own cost; attach a web ACL to the stage if wanted. Per-key usage plans and the app limiter bound abuse.',
    },
    {
      id: 'AwsSolutions-APIG4',
      reason: 'Customer routes require an API Gateway API key (usage plans) and the app resolves each key to its tenant; /v1/docs and /v1/openapi.json are public documentation by design.',
    },
    {
      id: 'AwsSolutions-APIG2',
      reason: 'Routes are Lambda proxies ({proxy+}) without API Gateway models; every body, query and path parameter is validated by the zod schemas that also generate /v1/openapi.json, with errors naming the field.',
    },
    {
      id: 'AwsSolutions-COG4',
      reason: 'Customers authenticate with API keys, not Cognito users (see APIG4).',
    },
    {
      id: 'AwsSolutions-L1',
      reason: 'Node.js 22 is the platform runtime chosen for Cairn (ARCHITECTURE.md); upgrade deliberately, not by lint.',
    },
    {
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason: 'The API Gateway account role uses AmazonAPIGatewayPushToCloudWatchLogs, the managed policy AWS documents for stage logging.',
    },
  ];
  for (const finding of findings) Validations.of(api).acknowledge(finding);
}
