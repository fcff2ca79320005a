/** Output schema of an impact report (SPEC §6 `pg-agent impact --json`); extra fields pass through. */
import { z } from 'zod';

export const IMPACT_SCHEMA = z.looseObject({
  statements: z.array(z.string()),
  estimatedRows: z.number().nullable(),
  exactRows: z.number().nullable(),
  tables: z.array(
    z.looseObject({
      schema: z.string(),
      name: z.string(),
      via: z.string(),
      inserted: z.number(),
      updated: z.number(),
      deleted: z.number(),
    }),
  ),
  risk: z.enum(['LOW', 'MEDIUM', 'HIGH', 'CRITICAL']),
  requiresApproval: z.boolean(),
  wouldFail: z.looseObject({ code: z.string(), message: z.string() }).nullable(),
  warnings: z.array(z.string()),
  previewed: z.boolean(),
  reach: z.array(
    z.looseObject({
      function: z.string(),
      via: z.string(),
      verdict: z.enum(['safe', 'side-effect', 'unknown']),
      effect: z.string().optional(),
    }),
  ),
});

export const IMPACT_OUTPUT = IMPACT_SCHEMA.shape;
