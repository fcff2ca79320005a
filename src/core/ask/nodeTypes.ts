/** The shape of every ask-graph node. */
import type { LangGraphRunnableConfig } from '@langchain/langgraph';
import type { AskStateValue, AskUpdate } from './state';

export type AskNode = (state: AskStateValue, config: LangGraphRunnableConfig) => Promise<AskUpdate>;
