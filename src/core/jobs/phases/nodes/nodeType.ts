/** The shape of every node of the job's phases graph. */
import type { LangGraphRunnableConfig } from '@langchain/langgraph';
import type { JobStateValue, JobUpdate } from '../jobState';

export type JobNode = (state: JobStateValue, config: LangGraphRunnableConfig) => Promise<JobUpdate>;
