/** Sizes and shapes the host and the panel agree on, as plain values (the webview bundles no zod for them). */

export const JOB_ID_PATTERN = /^job_[0-9a-f]{16}$/;

/** An Ask run's id (core's THREAD_ID_PATTERN, as the panel may check it). */
export const ASK_ID_PATTERN = /^ask_[a-z0-9]{16}$/;

/** Longest feedback or chat message the panel sends (a few pages of text). */
export const MAX_MESSAGE_CHARS = 20_000;
