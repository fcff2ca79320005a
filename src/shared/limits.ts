/** Sizes and shapes the host and the panel agree on, as plain values (the webview bundles no zod for them). */

export const JOB_ID_PATTERN = /^job_[0-9a-f]{16}$/;

/** Longest feedback or chat message the panel sends (a few pages of text). */
export const MAX_MESSAGE_CHARS = 20_000;
