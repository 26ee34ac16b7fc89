import type { ExecutionContext, ExecutionResult } from './context.js';
import { executeChat } from './chat.js';
import { executeMedia } from './media.js';
import { executeNative } from './native.js';

export { partialChatUsage } from './chat.js';
export type {
  ExecutionContext,
  ExecutionResult,
  Progress,
  TokenUsage,
  UpstreamTimeouts,
} from './context.js';

/** Runs the upstream part of a job: the model call, with failover, relaying chunks. */
export function execute(ctx: ExecutionContext): Promise<ExecutionResult> {
  switch (ctx.job.endpoint) {
    case 'chat.completions':
      return executeChat(ctx);
    case 'native':
      return executeNative(ctx);
    default:
      return executeMedia(ctx);
  }
}
