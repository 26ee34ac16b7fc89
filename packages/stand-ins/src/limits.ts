/*
 * Limits on everything a stand-in accepts or keeps, so a runaway test or benchmark cannot make
 * it hold unbounded memory or generate forever.
 */

export const JSON_BODY_LIMIT_BYTES = 2 * 1024 * 1024;
export const MULTIPART_BODY_LIMIT_BYTES = 25 * 1024 * 1024;
/** Hard cap on tokens one choice may generate, whatever max_tokens says. */
export const MAX_GENERATED_TOKENS = 32_768;
/** Context window the stand-in model node advertises (prompt + completion). */
export const DEFAULT_MAX_MODEL_LEN = 32_768;
/** Natural answers are kept well below the generation cap. */
export const MAX_ANSWER_TOKENS = 4_096;
export const MAX_CHOICES = 16;
export const MAX_PROVIDER_CHOICES = 128;
export const MAX_STOP_SEQUENCES = 4;
export const MAX_EMBEDDING_INPUTS = 2_048;
export const MAX_EMBEDDING_INPUT_TOKENS = 8_192;
export const MAX_EMBEDDING_DIMENSIONS = 4_096;
export const MAX_RERANK_DOCUMENTS = 1_000;
export const MAX_IMAGES = 10;
export const MAX_SPEECH_INPUT_CHARS = 4_096;
export const MAX_SPEECH_BYTES = 1024 * 1024;
export const MAX_VIDEO_SECONDS = 60;
export const MAX_TOOLS = 128;
/** Recorded requests kept for assertions (oldest dropped first). */
export const REQUEST_LOG_LIMIT = 500;
/** Distinct request markers counted (`markedCalls`); later markers are not counted. */
export const MARKED_REQUEST_LIMIT = 100_000;
/** Bodies larger than this are recorded by size only, so the log stays small. */
export const RECORDED_BODY_LIMIT_BYTES = 64 * 1024;
/** A fault repeated more often than this is a mistake in the test. */
export const MAX_FAULT_COUNT = 1_000_000;
export const MAX_LATENCY_MS = 600_000;
export const MAX_TOKENS_PER_SECOND = 1_000_000;
