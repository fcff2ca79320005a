/**
 * What the models are asked to return in a session, as zod schemas (sent to the providers as JSON schema
 * and checked on the way back, with one repair): an analysis, a review of the other analysis, the round's
 * synthesis of options, and the final plan.
 */
import { z } from 'zod';

const level = z.enum(['low', 'medium', 'high']);

export const proposedSqlSchema = z.object({
  sql: z.string().min(1),
  purpose: z.string(),
  /** What the proposal claims the statement is, checked against the parser. */
  kind: z.enum(['read', 'write', 'ddl']),
  /** The tables (or other objects) it claims to touch, checked against the parser and the preview. */
  objects: z.array(z.string()),
  /** Rows it claims to touch or return, checked against the preview or EXPLAIN when given. */
  expectedRows: z.number().nullable().optional(),
});
export type ProposedSql = z.infer<typeof proposedSqlSchema>;

export const analysisSchema = z.object({
  understanding: z.string().min(1),
  approaches: z
    .array(
      z.object({
        name: z.string().min(1),
        description: z.string(),
        effort: level,
        sql: z.array(proposedSqlSchema),
      }),
    )
    .min(1)
    .max(3),
  risks: z.array(z.string()),
  assumptions: z.array(z.string()),
  questions: z.array(z.string()),
});
export type Analysis = z.infer<typeof analysisSchema>;

const pointSchema = z.object({ point: z.string().min(1), reason: z.string() });

export const reviewSchema = z.object({
  agreements: z.array(pointSchema),
  disagreements: z.array(pointSchema),
  /** Points neither analysis made (a new insight keeps the discussion from being stable). */
  newInsights: z.array(z.string()),
});
export type Review = z.infer<typeof reviewSchema>;

export const synthesisOutputSchema = z.object({
  solutions: z
    .array(
      z.object({
        name: z.string().min(1),
        description: z.string(),
        effort: level,
        maintainability: z.string(),
        performance: z.string(),
        pros: z.array(z.string()),
        cons: z.array(z.string()),
        /** Ids of the approaches it builds on ("A1", "B2"): their SQL's verification becomes the option's. */
        approachIds: z.array(z.string()).min(1),
      }),
    )
    .min(2)
    .max(3),
  clarificationQuestions: z.array(z.string()),
});
export type SynthesisOutput = z.infer<typeof synthesisOutputSchema>;
