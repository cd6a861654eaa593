import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
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
    const domain = this.customDomain();
    this.site = new ConsoleSite(this, 'Console', {
      api: props.api,
      assets: new URL('../../console/dist', import.meta.url).pathname,
      ...(domain ? { domain: { name: domain.name, certificate: Certificate.fromCertificateArn(this, 'Certificate', domain.certificateArn) } } : {}),
    });
    const host = domain?.name ?? this.site.distribution.distributionDomainName;
    new CfnOutput(this, 'ConsoleUrl', { value: `https://${host}/console/`, description: 'The web console (sign in with an API key or a platform token)' });
    new CfnOutput(this, 'ApiViaConsoleUrl', { value: `https://${host}/v1`, description: 'The same API, through the console’s distribution' });
  }

  /**
   * `-c consoleDomain=console.example.com -c consoleCertificateArn=arn:aws:acm:us-east-1:…`: both or
   * neither; CloudFront takes certificates from us-east-1 only. Point the name at the distribution
   * (a CNAME or alias to its *.cloudfront.net name) where the zone lives.
   */
  private customDomain(): { name: string; certificateArn: string } | undefined {
    const name = this.node.tryGetContext('consoleDomain') as unknown;
    const certificateArn = this.node.tryGetContext('consoleCertificateArn') as unknown;
    if (name === undefined && certificateArn === undefined) return undefined;
    if (typeof name !== 'string' || !/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i.test(name)) {
      throw new Error(`consoleDomain: ${JSON.stringify(name)} is not a domain name (it goes with consoleCertificateArn)`);
    }
    if (typeof certificateArn !== 'string' || !/^arn:aws[a-z-]*:acm:us-east-1:\d{12}:certificate\/[\w-]+$/.test(certificateArn)) {
      throw new Error(`consoleCertificateArn: ${JSON.stringify(certificateArn)} is not an ACM certificate ARN in us-east-1 (CloudFront reads certificates there only)`);
    }
    return { name, certificateArn };
  }
}
