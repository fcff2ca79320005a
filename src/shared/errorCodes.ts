/** Error codes the UI and the CLI act on. Shared with the webview, so it holds plain data only. */
export const ERROR_CODES = [
  'DB_UNREACHABLE',
  'DB_HOST_NOT_FOUND',
  'DB_AUTH_FAILED',
  'DB_ROLE_NOT_FOUND',
  'DB_NOT_FOUND',
  'DB_SSL_REQUIRED',
  'DB_SSL_UNSUPPORTED',
  'DB_CONNECT_FAILED',
  'DB_QUERY_FAILED',
  'SAMPLE_DB_FAILED',
  'REDIS_UNREACHABLE',
  'SQL_EMPTY',
  'SQL_SYNTAX',
  'SQL_REFUSED',
  'SQL_PLACEHOLDERS',
  'SQL_TIMEOUT',
  'APPROVAL_NOT_FOUND',
  'APPROVAL_EXPIRED',
  'APPROVAL_REJECTED',
  'APPROVAL_NOT_APPROVED',
  'APPROVAL_ALREADY_USED',
  'APPROVAL_SQL_MISMATCH',
  'APPROVAL_CONNECTION_MISMATCH',
  /** A decision made on another version of the SQL or plan than the ticket's (a stale click). */
  'APPROVAL_STALE',
  /** Signatures or approval.policy do not allow this execution (yet): exit 4, the ticket is not spent. */
  'APPROVAL_POLICY',
  'IMPACT_EXCEEDED',
  /** Approved DDL could not get its lock within its short waits (others hold it): nothing ran, the ticket is not spent. */
  'LOCK_UNAVAILABLE',
  'CONFIG_INVALID',
  'PROFILE_NOT_FOUND',
  'BAD_INPUT',
  /** A job the agent ended as impossible (job_failed), or that ran past its limits. */
  'JOB_FAILED',
  /** Another window, process or machine drives the job now (its lease is held). */
  'JOB_BUSY',
  'INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** An error as it crosses a boundary (webview message, CLI --json). */
export interface ErrorInfo {
  code: ErrorCode;
  message: string;
  /** What the person can do next. */
  advice?: string;
}
