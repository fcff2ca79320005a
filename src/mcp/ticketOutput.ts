/** Output schemas of tickets: the summary `pg-agent sql --json` prints, and the whole ticket `approvals show --json` prints. */
import { z } from 'zod';
import { IMPACT_SCHEMA } from './impactOutput';

const STATUS = z.enum(['PENDING_APPROVAL', 'APPROVED', 'REJECTED', 'EXPIRED', 'EXECUTING', 'EXECUTED', 'FAILED']);

export const TICKET_SUMMARY_SCHEMA = z.looseObject({
  id: z.string(),
  status: STATUS,
  risk: z.string(),
  connection: z.string(),
  sqlHash: z.string(),
  createdBy: z.string(),
  createdAt: z.string(),
  expiresAt: z.string(),
});

export const TICKET_OUTPUT = {
  id: z.string(),
  sql: z.string(),
  status: STATUS,
  risk: z.string(),
  connection: z.string(),
  impact: IMPACT_SCHEMA,
  createdBy: z.string(),
  expiresAt: z.string(),
  history: z.array(z.looseObject({ action: z.string(), by: z.string(), at: z.string() })),
};
