import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import type { Construct } from 'constructs';
import { ConsoleSite } from '../constructs/console-site';

export interface ConsoleStackProps extends StackProps {
  readonly api: RestApi;
}

/** The web console (stateless): its own stack, so it deploys, or not (`-c console=false`), apart from the API. */
export class ConsoleStack extends Stack {
  readonly site: ConsoleSite;

  constructor(scope: Construct, id: string, props: ConsoleStackProps) {
    super(scope, id, props);
    this.site = new ConsoleSite(this, 'Console', { api: props.api, assets: new URL('../../console/dist', import.meta.url).pathname });
    new CfnOutput(this, 'ConsoleUrl', { value: `https://${this.site.distribution.distributionDomainName}/console/`, description: 'The web console (sign in with an API key or a platform token)' });
    new CfnOutput(this, 'ApiViaConsoleUrl', { value: `https://${this.site.distribution.distributionDomainName}/v1`, description: 'The same API, through the console’s distribution' });
  }
}
