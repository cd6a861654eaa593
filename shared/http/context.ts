import type { ApiKeyIdentity } from '../store/api-keys';

/** Variables middleware sets once and handlers read (`c.get('identity')`). */
export interface AppEnv {
  Variables: {
    requestId: string;
    identity: ApiKeyIdentity;
  };
}
