import { inject } from 'vitest';
import { useDynamoEndpoint } from '../../shared/store/client';

useDynamoEndpoint(inject('dynamoEndpoint'));
