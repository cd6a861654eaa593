import { inject } from 'vitest';
import { useDynamoEndpoint } from '../../shared/store/client';

useDynamoEndpoint(inject('dynamoEndpoint'));
import { randomBytes } from 'node:crypto';
import { useLocalSecretsKey } from '../../shared/secrets/secret-box';

useLocalSecretsKey(randomBytes(32));
