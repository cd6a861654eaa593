/**
 * The console's content security policy, one text for both places that serve it: local mode
 * (local/console-site.ts) and CloudFront (infra/constructs/console-site.ts). Nothing runs or loads
 * but the console's own files; the API is the same origin; large uploads PUT to S3 over https, plus
 * whatever `connectSources` a server adds (local mode's S3 on loopback).
 */
export function consoleContentSecurityPolicy(connectSources: string[] = []): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    ['connect-src', "'self'", 'https:', ...connectSources].join(' '),
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');
}
