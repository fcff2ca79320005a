/** Sizes and shapes the host and the panel agree on, as plain values (the webview bundles no zod for them). */

/** Longest feedback or chat message the panel sends (a few pages of text). */
export const MAX_MESSAGE_CHARS = 20_000;
