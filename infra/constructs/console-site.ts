import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  Function as CloudFrontFunction,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  HttpVersion,
  OriginRequestPolicy,
  PriceClass,
  ResponseHeadersPolicy,
  SecurityPolicyProtocol,
  ViewerProtocolPolicy,
  type BehaviorOptions,
} from 'aws-cdk-lib/aws-cloudfront';
import { RestApiOrigin, S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership, type CfnBucket } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import type { ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import { Construct } from 'constructs';
import { consoleContentSecurityPolicy } from '../../console/content-security-policy';

export interface ConsoleSiteProps {
  /** The REST API the console calls: served by the same distribution, so the browser calls its own origin (no CORS). */
  readonly api: RestApi;
  /** The console's build (`console/dist`). */
  readonly assets: string;
  /** A custom domain and its ACM certificate (us-east-1); without one, the *.cloudfront.net name. */
  readonly domain?: { readonly name: string; readonly certificate: ICertificate };
}

/**
 * The console in AWS: its files in a private bucket read by CloudFront through origin access
 * control, and the API behind the same distribution at `/v1/*`, `/platform/*` and `/mcp`, uncached
 * and with every header but Host passed on (X-API-Key, Authorization, Accept for streams).
 */
export class ConsoleSite extends Construct {
  readonly distribution: Distribution;
  readonly bucket: Bucket;

  constructor(scope: Construct, id: string, props: ConsoleSiteProps) {
    super(scope, id);
    this.bucket = new Bucket(this, 'Assets', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
    });

    // /console and /console/ are the page; / leads there.
    const paths = new CloudFrontFunction(this, 'ConsolePaths', {
      runtime: FunctionRuntime.JS_2_0,
      comment: 'Cairn console: serve index.html for /console and /console/',
      code: FunctionCode.fromInline(
        [
          'function handler(event) {',
          '  var uri = event.request.uri;',
          "  if (uri === '/' || uri === '') return { statusCode: 302, statusDescription: 'Found', headers: { location: { value: '/console/' } } };",
          "  if (uri === '/console' || uri === '/console/') event.request.uri = '/console/index.html';",
          '  return event.request;',
          '}',
        ].join('\n'),
      ),
    });
    const headers = new ResponseHeadersPolicy(this, 'ConsoleHeaders', {
      comment: 'Cairn console: only its own files run; the API is this origin; uploads PUT to S3',
      securityHeadersBehavior: {
        contentSecurityPolicy: {
          contentSecurityPolicy: consoleContentSecurityPolicy(),
          override: true,
        },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.NO_REFERRER, override: true },
        strictTransportSecurity: { accessControlMaxAge: Duration.days(365), includeSubdomains: true, override: true },
      },
    });
    const api: BehaviorOptions = {
      origin: new RestApiOrigin(props.api),
      viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
      allowedMethods: AllowedMethods.ALLOW_ALL,
      cachePolicy: CachePolicy.CACHING_DISABLED,
      originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      compress: false,
    };
    this.distribution = new Distribution(this, 'Distribution', {
      comment: 'Cairn console and API',
      httpVersion: HttpVersion.HTTP2_AND_3,
      priceClass: PriceClass.PRICE_CLASS_100,
      // The TLS policy is ours to set only with a certificate of our own (the default one's is fixed).
      ...(props.domain ? { domainNames: [props.domain.name], certificate: props.domain.certificate, minimumProtocolVersion: SecurityPolicyProtocol.TLS_V1_2_2021 } : {}),
      defaultBehavior: {
        origin: S3BucketOrigin.withOriginAccessControl(this.bucket),
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        cachePolicy: CachePolicy.CACHING_OPTIMIZED,
        responseHeadersPolicy: headers,
        functionAssociations: [{ function: paths, eventType: FunctionEventType.VIEWER_REQUEST }],
      },
      additionalBehaviors: { '/v1/*': api, '/platform/*': api, '/mcp': api },
    });

    // Hashed assets are immutable and stay for pages still open on an older build; the page
    // itself is revalidated and invalidated, so a deploy shows at the next load.
    new BucketDeployment(this, 'DeployAssets', {
      sources: [Source.asset(props.assets, { exclude: ['index.html'] })],
      destinationBucket: this.bucket,
      destinationKeyPrefix: 'console/',
      cacheControl: [CacheControl.fromString('public, max-age=31536000, immutable')],
      prune: false,
    });
    new BucketDeployment(this, 'DeployPage', {
      sources: [Source.asset(props.assets, { exclude: ['*', '!index.html'] })],
      destinationBucket: this.bucket,
      destinationKeyPrefix: 'console/',
      cacheControl: [CacheControl.noCache()],
      prune: false,
      distribution: this.distribution,
      distributionPaths: ['/console/', '/console/index.html'],
    });

    this.acknowledge(!props.domain);
  }

  private acknowledge(defaultCertificate: boolean) {
    const stack = Stack.of(this);
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason: 'The bucket holds the console’s public build only (no data); CloudFront alone reads it, and every API call the console makes is in the API’s access logs.',
    });
    const distribution = Validations.of(this.distribution);
    distribution.acknowledge({ id: 'AwsSolutions-CFR1', reason: 'A console for the deployer’s own teams: where they may be is not Cairn’s to restrict; add a geo restriction if wanted.' });
    distribution.acknowledge({ id: 'AwsSolutions-CFR2', reason: 'WAFv2 is an account-level choice with its own cost (as for the API, APIG3); attach a web ACL if wanted.' });
    distribution.acknowledge({
      id: 'AwsSolutions-CFR3',
      reason: 'CloudFront standard logs need an ACL-enabled bucket; the API calls behind this distribution are logged by API Gateway’s access logs, and the static files carry no data.',
    });
    if (defaultCertificate) {
      distribution.acknowledge({
        id: 'AwsSolutions-CFR4',
        reason: 'With CloudFront’s default *.cloudfront.net certificate CloudFront fixes the TLS policy itself. Deploy with -c consoleDomain=… -c consoleCertificateArn=… for a custom domain, which sets TLSv1.2_2021.',
      });
    }
    // CDK's BucketDeployment copies the build with a Lambda-backed custom resource of its own.
    const deployment = Validations.of(stack);
    deployment.acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      reason: 'CDK’s BucketDeployment custom resource writes its logs with the managed basic execution policy.',
    });
    // Its grants: read the CDK asset bucket, write the console bucket, invalidate (Resource::*).
    const bucketArn = `<${stack.getLogicalId(this.bucket.node.defaultChild as CfnBucket)}.Arn>`;
    for (const finding of [
      'Action::s3:Abort*',
      'Action::s3:DeleteObject*',
      'Action::s3:GetBucket*',
      'Action::s3:GetObject*',
      'Action::s3:List*',
      'Resource::*',
      `Resource::${bucketArn}/*`,
      'Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-<AWS::Region>/*',
    ]) {
      deployment.acknowledge({
        id: `AwsSolutions-IAM5[${finding}]`,
        reason: 'CDK’s BucketDeployment custom resource: its own grants to read the CDK asset bucket, write the console bucket’s objects and invalidate the distribution (CloudFront invalidations take no resource ARN).',
      });
    }
    deployment.acknowledge({ id: 'AwsSolutions-L1', reason: 'CDK’s BucketDeployment custom resource picks its own runtime.' });
  }
}
