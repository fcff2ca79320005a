/** The port of the inline approval's decisions (host/sqlApproval/heldWriteDecisions.ts): the core loads when called. */
import type { CoreLoader } from '../lazyServices';
import type { SettingsPort } from '../settings/settings';
import { safetySettings } from '../settings/settings';
import type { HeldWriteDecisionsPort } from '../sqlApproval/heldWriteDecisions';

export function heldWriteDecisionsPort(
  core: CoreLoader,
  settings: SettingsPort,
  rootDir: string,
): HeldWriteDecisionsPort {
  return {
    settings: () => safetySettings(settings, rootDir),
    decideTicket: (store, ticketId, request) => core().decideTicket(store, ticketId, request),
    ticketHash: (ticket) => core().ticketHash(ticket),
    decisionScope: (session) => core().decisionScope(session),
    executeApproved: (db, store, ticketId, options) => core().executeApproved(db, store, ticketId, options),
    undoSink: (ticketId) => core().workspaceUndoSink(core().workspacePaths(rootDir).undo, ticketId),
    signatureState: (ticket, decision, approvers) => core().signatureState(ticket, decision, approvers),
    toAgentError: (error) => core().toAgentError(error),
  };
}
