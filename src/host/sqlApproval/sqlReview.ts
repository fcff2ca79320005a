/**
 * TRANSITIONAL (issue 23, removed when host/jobs is converted): the one port through which src/host/jobs still
 * reaches the window's tickets and the inline approval under the old name. Everything else takes `WindowTickets`
 * and `InlineApproval` directly; the jobs half moves to them too, then this file goes.
 */
import type { SigningKey } from '../../core/approvals/approvalPath';
import type { TicketStore } from '../../core/approvals/ticketStore';
import type { HeldWrite } from './approvalEntries';
import type { InlineApproval } from './inlineApproval';
import type { WindowTickets } from './windowTickets';

export type { HeldWriteOwner } from './approvalEntries';

export interface SqlReview {
  ticketStore(): Promise<TicketStore>;
  signingKey(): Promise<SigningKey | undefined>;
  view(): ReturnType<InlineApproval['view']>;
  track(held: HeldWrite): void;
}

export function legacyReviewPort(tickets: WindowTickets, approval: InlineApproval): SqlReview {
  return {
    ticketStore: () => tickets.ticketStore(),
    signingKey: () => tickets.signingKey(),
    view: () => approval.view(),
    track: (held) => approval.track(held),
  };
}
