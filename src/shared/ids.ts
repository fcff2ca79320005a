/**
 * The shapes of our ids, once: core checks them before building a path from one, the host and the panels
 * check what a message carries. Plain values (the webview bundles no zod for them).
 */

/** A job: `job_` and 16 hex digits (core/jobs/job.ts newJobId). */
export const JOB_ID_SOURCE = 'job_[0-9a-f]{16}';
export const JOB_ID_PATTERN = new RegExp(`^${JOB_ID_SOURCE}$`);

/** An approval ticket: `tkt_` and 20 base32 letters (core/approvals/ticketStore.ts newTicketId). */
export const TICKET_ID_SOURCE = 'tkt_[a-z2-7]{20}';
export const TICKET_ID_PATTERN = new RegExp(`^${TICKET_ID_SOURCE}$`);

/** An Ask run (its graph thread): `ask_` and 16 of [a-z0-9] (core/ask/threadId.ts). */
export const ASK_ID_PATTERN = /^ask_[a-z0-9]{16}$/;

/** A collaborative planning session: `collab_` and 16 hex digits (core/collab/sessionTypes.ts newSessionId). */
export const SESSION_ID_PATTERN = /^collab_[0-9a-f]{16}$/;

/** A plan edit the review chat proposed: `edit_` and 12 hex digits (core/review/planEdit.ts). */
export const PLAN_EDIT_ID_PATTERN = /^edit_[0-9a-f]{12}$/;

/** A SHA-256 as 64 lowercase hex digits: a ticket's hash, a plan's hash (what a decision names as what it saw). */
export const SHA256_HEX_PATTERN = /^[0-9a-f]{64}$/;
