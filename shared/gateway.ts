import type { Plan } from './config';

/** API Gateway's side of provisioned keys; one per runtime. */
export interface Gateway {
  /** Whether provisioned keys are registered in API Gateway (AWS) or live in DynamoDB only (local). */
  readonly enabled: boolean;
  /** Creates the key in the usage plan of its plan; returns API Gateway's key id. */
  register(key: { value: string; name: string; plan: Plan }): Promise<string>;
  remove(gatewayKeyId: string): Promise<void>;
}

/** Local mode: keys live in DynamoDB only. */
export const noGateway: Gateway = {
  enabled: false,
  register: async () => {
    throw new Error('API Gateway is not configured (USAGE_PLAN_NAME_PREFIX)');
  },
  remove: async () => {},
};
