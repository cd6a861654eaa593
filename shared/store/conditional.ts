import { ConditionalCheckFailedException } from './dynamo-commands';

/**
 * A conditional write's outcome: what DynamoDB answered, or undefined when the condition did not
 * hold (the item was taken, changed or already there) — an expected answer, not an error.
 */
export async function ifConditionHolds<T>(write: Promise<T>): Promise<T | undefined> {
  try {
    return await write;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}
