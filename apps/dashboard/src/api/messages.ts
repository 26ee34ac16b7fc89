import { ApiError } from './client';

// What a person reads for each documented error code; anything else shows the gateway's message.
const MESSAGES: Record<string, string> = {
  invalid_credentials: 'Wrong email or password.',
  invalid_invitation:
    'This invitation link is invalid, already used or expired. Ask for a new one.',
  session_required: 'Your session has ended. Please sign in again.',
  csrf_failed: 'This page is out of date. Reload it and try again.',
  forbidden: 'Your role does not allow this.',
  resource_not_found: 'Not found. It may have been deleted.',
  conflict: 'That name is already taken.',
  network_error: 'The gateway could not be reached. Check your connection and try again.',
};

export function errorMessage(error: unknown): string {
  if (!(error instanceof ApiError)) return 'Something went wrong. Please try again.';
  if (error.code === 'rate_limit_exceeded') {
    return error.retryAfterS === null
      ? 'Too many attempts. Please wait and try again.'
      : `Too many attempts. Try again in ${error.retryAfterS} s.`;
  }
  return MESSAGES[error.code] ?? error.message;
}
