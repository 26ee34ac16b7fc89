/**
 * Items of a stored response: its input items, then the `output` items of its response object.
 * Billing reads nothing of an item but its `id` (what `item_reference` names) and its `type`.
 */
import { Type } from '@sinclair/typebox';
import {
  createBodyValidator,
  GatewayError,
  ResponseItemRecordSchema,
  type ResponseItemRecord,
} from '@gateway/contracts';
import type { ResponseContent } from './response-sealing.js';

// The history answers output items as item records: each must carry an id and a type.
const ResponseOutputSchema = Type.Object({
  output: Type.Optional(Type.Array(ResponseItemRecordSchema)),
});
const validateOutput = createBodyValidator<{ output?: ResponseItemRecord[] }>(ResponseOutputSchema);

/** The response's `output` items, refused (400 naming the item) unless each is an item record. */
export function validatedOutputItems(response: Record<string, unknown>): ResponseItemRecord[] {
  try {
    return validateOutput(response).output ?? [];
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    // The validator names fields from the response object; edge's body has it as `response`.
    const param = error.param ?? 'output';
    const message = error.message.startsWith(param) ? `response.${error.message}` : error.message;
    throw new GatewayError(error.code, message, { param: `response.${param}` });
  }
}

/** The output items of stored content (validated when it was saved). */
const outputItemsOf = (content: ResponseContent): ResponseItemRecord[] =>
  (content.response.output as ResponseItemRecord[] | undefined) ?? [];

/** Input items then output items: the order a conversation continues in. */
export const itemsOf = (content: ResponseContent): ResponseItemRecord[] => [
  ...content.inputItems,
  ...outputItemsOf(content),
];

/** The ids to index for `item_reference`, each once (the first occurrence is the one found). */
export const itemIdsOf = (content: ResponseContent): string[] => [
  ...new Set(itemsOf(content).map((item) => item.id)),
];

/** The content's first item with this id. */
export const itemIn = (content: ResponseContent, itemId: string): ResponseItemRecord | undefined =>
  itemsOf(content).find((item) => item.id === itemId);
