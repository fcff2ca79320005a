/** The ports of the SQL approval's parts (host/sqlApproval/): each function loads the core when called, never before. */
import type { CoreLoader } from '../lazyServices';
import type { ApprovalKeyPort } from '../sqlApproval/approvalKey';
import type { ApprovalsBadgePort } from '../sqlApproval/approvalsBadge';
import type { InlineApprovalPort } from '../sqlApproval/inlineApproval';
import type { WindowTicketsPort } from '../sqlApproval/windowTickets';

export function approvalKeyPort(core: CoreLoader): ApprovalKeyPort {
  return {
    openPrivateKey: (...args) => core().openPrivateKey(...args),
    parseEnvelope: (...args) => core().parseEnvelope(...args),
    publicKeyText: (...args) => core().publicKeyText(...args),
    sealPrivateKey: (...args) => core().sealPrivateKey(...args),
    minPassphraseLength: () => core().MIN_PASSPHRASE_LENGTH,
    error: (...args) => new (core().AgentError)(...args),
  };
}

export function windowTicketsPort(core: CoreLoader): WindowTicketsPort {
  return {
    openTicketStore: (...args) => core().openTicketStore(...args),
    workspacePaths: (...args) => core().workspacePaths(...args),
    databaseResolver: (...args) => core().databaseResolver(...args),
  };
}

export function approvalsBadgePort(core: CoreLoader): ApprovalsBadgePort {
  return { toAgentError: (...args) => core().toAgentError(...args) };
}

export function inlineApprovalPort(core: CoreLoader): InlineApprovalPort {
  return {
    runSql: (...args) => core().runSql(...args),
    workspacePaths: (...args) => core().workspacePaths(...args),
    saveImpactReport: (...args) => core().saveImpactReport(...args),
    toAgentError: (...args) => core().toAgentError(...args),
  };
}
