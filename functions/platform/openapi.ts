import { errorResponse, jsonContent } from '../../shared/http/openapi-schemas';

export const tokenSecurity = [{ PlatformToken: [] }];
export const adminSecurity = [{ PlatformAdmin: [] }];

/** The error statuses every token-authenticated platform route can answer with. */
export const platformErrors = {
  400: jsonContent(errorResponse, 'Invalid request: details.field names the field'),
  401: jsonContent(errorResponse, 'Missing, invalid, tampered, expired or revoked access token'),
  403: jsonContent(errorResponse, 'X-Tenant-Id or X-PG-Schema does not match the token'),
  413: jsonContent(errorResponse, 'Body too large'),
  415: jsonContent(errorResponse, 'Body is not application/json'),
  431: jsonContent(errorResponse, 'Request headers over 16 KB (local mode’s server; in AWS, API Gateway’s own header limit applies)'),
  500: jsonContent(errorResponse, 'Internal error'),
  503: jsonContent(errorResponse, 'The data store is briefly unavailable; retry after Retry-After seconds'),
};
