/** `execute_approved(ticket_id)`: runs an approved ticket's own SQL, once. A ticket nobody approved is refused. */
import { z } from 'zod';
import { executeTicket } from '../executeTicket';
import { defineTool } from '../toolSpec';

export const executeApprovedTool = defineTool({
  name: 'execute_approved',
  title: 'Execute an approved write',
  description:
    'Runs the SQL of an approved ticket you proposed with propose_write (a person approving it in VS Code or a terminal ' +
    "only records the decision; running it is yours): exactly the ticket's own SQL, once, in one transaction, on the database it was " +
    'approved for; rolled back when it would change more rows than were approved. Refused for a ticket that is pending, ' +
    'rejected, expired or already used, and when the approval policy in force for this database (read again now; a workspace ' +
    'file can only tighten it) wants more: signatures, a second person, a role. Without signed mode it checks that an ' +
    'approval was recorded, not that a person made it. Returns the rows changed per table and the path of an undo script.',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  input: { ticket_id: z.string().max(100).describe('An APPROVED ticket id (tkt_…).') },
  output: {
    status: z.literal('executed'),
    ticket: z.string(),
    rows: z.number(),
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
    undoFile: z.string(),
    elapsedMs: z.number(),
  },
  async run(context, { ticket_id: id }) {
    const execution = await executeTicket(context, id);
    const tables = execution.tables
      .map(
        (t) => `  ${t.schema}.${t.name} (${t.via}): ${t.inserted} inserted, ${t.updated} updated, ${t.deleted} deleted`,
      )
      .join('\n');
    return {
      structured: { ...execution },
      text: `Executed ticket ${execution.ticket}: ${execution.rows} rows changed.\n${tables}\nUndo script: ${execution.undoFile}. The ticket is used up; it cannot run again.`,
    };
  },
});
