/** The port of the window's jobs (host/jobs/jobParts.ts): the core's job runner, stores and readers, loaded when called. */
import type { JobsPort } from '../jobs/jobParts';
import type { CoreLoader } from '../lazyServices';
import type { ModelProviderPort } from '../settings/modelProvider';
import { modelProviderPort } from './modelProviderPort';

/** `model`: the window's Gemini key and logger, what the configured model is made with. */
export function jobsPort(core: CoreLoader, model: Pick<ModelProviderPort, 'geminiKey' | 'logger'>): JobsPort {
  return {
    ...modelProviderPort(core, model),
    jobStore: (...args) => new (core().JobStore)(...args),
    jobRunner: (...args) => new (core().JobRunner)(...args),
    jobLeases: (...args) => new (core().JobLeases)(...args),
    error: (...args) => new (core().AgentError)(...args),
    jobSearchIndexer: (...args) => core().jobSearchIndexer(...args),
    workspacePaths: (...args) => core().workspacePaths(...args),
    openLeaseBackend: (...args) => core().openLeaseBackend(...args),
    openJobCheckpointer: (...args) => core().openJobCheckpointer(...args),
    readJobDetail: (...args) => core().readJobDetail(...args),
    readChat: (...args) => core().readChat(...args),
    readJobTimeline: (...args) => core().readJobTimeline(...args),
    sendReviewMessage: (...args) => core().sendReviewMessage(...args),
    applyPlanEdit: (...args) => core().applyPlanEdit(...args),
    discardPlanEdit: (...args) => core().discardPlanEdit(...args),
  };
}
