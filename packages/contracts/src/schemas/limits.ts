/**
 * Bounds on public request fields. The spec gives only some (4 stop sequences, temperature 0–2,
 * penalties ±2, 1-year token lifetime); the rest are ours, chosen so a valid request is never
 * refused in practice while every field stays bounded. String lengths count Unicode code points.
 * The edge's body-size limit bounds the request as a whole on top of these.
 */
export const LIMITS = {
  /** Catalog ids such as `org/model-name`; far longer than any real id. */
  modelIdMaxLength: 256,
  /** Messages per chat request: long agent transcripts stay well under it. */
  messagesMaxItems: 2048,
  /** Characters per message / native input: ~1M tokens, beyond any context window we serve. */
  textMaxLength: 4_000_000,
  /** Spec: up to 4 stop sequences. */
  stopMaxItems: 4,
  /** `name` of a message, tool call or function call. */
  messageNameMaxLength: 256,
  /** Content parts in one message (the AI SDK sends one per text or file piece). */
  contentPartsMaxItems: 256,
  /** Image, audio and file parts in one request; each adds its token ceiling to the hold. */
  mediaPartsMaxItems: 64,
  /**
   * Characters of an image data URL or a base64 audio / file payload: 8 MiB decoded. Data URLs
   * also count toward the JSON body limit (edge's JSON_BODY_LIMIT_BYTES), which is usually the
   * tighter bound.
   */
  dataUrlMaxLength: 11_184_900,
  /** Assistant tool calls in one message (the tools limit: one call per declared tool). */
  toolCallsMaxItems: 128,
  /** `tool_calls[].id` / `tool_call_id`: ids are ~40 characters in practice. */
  toolCallIdMaxLength: 256,
  /** Characters per stop sequence. */
  stopSequenceMaxLength: 1024,
  /**
   * Choices per chat request. The hold is sized for n × the output cap, so a large n ties up a
   * large part of the balance; 16 covers sampling use cases.
   */
  nMax: 16,
  /** Token counts (max_tokens, max_new_tokens…): int32, what upstream servers accept. */
  tokensMax: 2_147_483_647,
  /** Native `top_k`: beyond any vocabulary we serve. */
  topKMax: 1_000_000,
  /** Native `repetition_penalty` (1 = none; useful values are near 1). */
  repetitionPenaltyMax: 100,
  /** `top_logprobs`: the reference API's own bound. */
  topLogprobsMax: 20,
  /** Tool definitions per request (the reference schema's own limit). */
  toolsMaxItems: 128,
  /** End-user identifier (`user`). */
  userMaxLength: 256,
  /** `metadata`: the reference API's own bounds (16 pairs, 64-character keys, 512 values). */
  metadataMaxEntries: 16,
  metadataKeyMaxLength: 64,
  metadataValueMaxLength: 512,
  /** Inputs per native request (embedding batches). */
  inputsMaxItems: 2048,
  /** Webhook URL length. */
  urlMaxLength: 2048,
  /**
   * API keys per account: far above any team's use, and it bounds the key
   * listing, which is answered whole.
   */
  apiKeysPerAccountMax: 100,
  /** API key names (they travel base64-encoded in the scoped token's `kid`). */
  apiKeyNameMaxLength: 256,
  /** Models listed in one scoped token (the token's length is bounded too, below). */
  tokenModelsMaxItems: 256,
  /** Models on one API key's list (a CHECK in billing's database says the same). */
  apiKeyModelsMaxItems: 256,
  /**
   * Characters of an issued scoped token (`jwt:...`): it must fit an `Authorization` header
   * behind common proxies (8 KiB per header line, e.g. nginx) with room for `Bearer `.
   */
  scopedTokenMaxLength: 8_000,
  /** Spec: scoped tokens live at most 1 year (365 days), which is also the default. */
  scopedTokenMaxLifetimeS: 31_536_000,
  /** DZD; keeps the µDZD value within exact JSON rendering (see money.ts). */
  spendingLimitMaxDzd: 1_000_000_000,
  /** Input items of one Responses request (`input` as a list), like the chat message limit. */
  responseInputItemsMaxItems: 2048,
  /**
   * Responses in one `previous_response_id` chain, the request's own included: the chain is read
   * in one query and the rebuilt conversation must still fit `messagesMaxItems`.
   */
  responseChainMaxDepth: 256,
  /** `item_reference` items in one Responses request. */
  responseItemReferencesMaxItems: 256,
  /** Bytes of one stored response (its input items, output and response object, as JSON). */
  storedResponseMaxBytes: 8 * 1024 * 1024,
  /** Input items per page of `GET /v1/responses/{id}/input_items` (the reference's maximum). */
  responseInputItemsPageMax: 100,
} as const;
