// What the intents ask of the user's input before they queue it: the API's own input schemas
// (lib/schemas.ts). On the page they run in the sync worker, which loads them after its start:
// evaluated on the page, zod was a 150-350 ms task of the main thread with the CPU slowed 4×
// (issue 30). In tests and benches, ../validate-input.ts directly.
import type { ConversationCreateInput, ConversationUpdateInput, FileUpdateInput } from '../../../schemas';
import type { SyncInputError } from '../../core/errors';

/** The parsed input, or its first problem (`path`: the field, dotted). */
export type Validated<T> = { ok: true; data: T } | { ok: false; message: string; path: string };

export interface InputValidators {
  conversationCreate(input: unknown): Promise<Validated<ConversationCreateInput>>;
  conversationUpdate(input: unknown): Promise<Validated<ConversationUpdateInput>>;
  fileUpdate(input: unknown): Promise<Validated<FileUpdateInput>>;
}

/** The data, or the problem thrown as the SyncInputError the UI shows (`describe` words it). */
export function validData<T>(result: Validated<T>, describe: (problem: { message: string; path: string }) => SyncInputError): T {
  if (result.ok) return result.data;
  throw describe(result);
}
