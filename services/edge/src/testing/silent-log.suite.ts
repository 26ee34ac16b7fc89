import { Writable } from 'node:stream';

/** A log destination that drops every line: tests that assert on behaviour, not on logs. */
export const silentStream = new Writable({ write: (_c, _e, cb) => cb() });
