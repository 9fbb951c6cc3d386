// The intents' input checks (intents/validation.ts) with the API's zod schemas: what the sync
// worker answers the page with, and what tests and the worker's own clients use directly.
import type * as z from 'zod';
import { ConversationCreateInput, ConversationUpdateInput, FileUpdateInput } from '../../schemas';
import type { InputValidators, Validated } from './intents/validation';

const check =
  <T>(schema: z.ZodType<T>) =>
  async (input: unknown): Promise<Validated<T>> => {
    const parsed = schema.safeParse(input);
    if (parsed.success) return { ok: true, data: parsed.data };
    const issue = parsed.error.issues[0];
    return { ok: false, message: issue?.message ?? 'invalid input', path: issue?.path.join('.') ?? '' };
  };

export const inputValidators: InputValidators = {
  conversationCreate: check(ConversationCreateInput),
  conversationUpdate: check(ConversationUpdateInput),
  fileUpdate: check(FileUpdateInput),
};
