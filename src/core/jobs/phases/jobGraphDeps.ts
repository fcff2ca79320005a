/** What the nodes of a job's phases graph are given from outside. */
import type { RunDeps } from '../../ask/runDeps';
import type { Embedder } from '../../llm/embeddings';
import type { JobAuditEvent } from '../jobAudit';
import type { JobEvent } from '../jobOutcome';
import type { JobStore } from '../jobStore';
import type { PlanningSettings } from '../planningSettings';

export interface JobGraphDeps extends RunDeps {
  store: JobStore;
  planning: PlanningSettings;
  modelTimeoutMs: number;
  maxModelCallsPerPhase: number;
  audit: (jobId: string, event: JobAuditEvent) => Promise<void>;
  emit: (event: JobEvent) => void;
  signal: AbortSignal | undefined;
  now: () => Date;
  /** The embedding model, when configured: the job is indexed for the review chat's vector_search at each phase boundary. */
  embedder?: Embedder;
}
