/**
 * The phases graph of a job (seed 002): strategic phase (explore, plan) → review stop → tactical phase
 * (execute todos; writes stop for approval) → strategic re-plan → … until job_complete. Wiring only.
 */
import { END, START, StateGraph } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import type { JobGraphDeps } from './jobGraphDeps';
import {
  routeAfterModel,
  routeAfterReview,
  routeAfterStrategic,
  routeAfterStrategicTools,
  routeAfterTactical,
  routeAfterTacticalTools,
  routeAfterWrite,
} from './jobRoutes';
import { JobState } from './jobState';
import { makeAwaitWriteNode } from './nodes/awaitWrite';
import { makeBeginStrategicNode } from './nodes/beginStrategic';
import { makeBeginTacticalNode } from './nodes/beginTactical';
import { makeEndStrategicNode } from './nodes/endStrategic';
import { makeEndTacticalNode } from './nodes/endTactical';
import { makeExecuteWriteNode } from './nodes/executeWrite';
import { makeFailJobNode } from './nodes/failJob';
import { makeCompleteJobNode } from './nodes/completeJob';
import { makePhaseModelNode } from './nodes/phaseModel';
import { makePhaseToolsNode } from './nodes/phaseTools';
import { makeReviewGateNode } from './nodes/reviewGate';

export function buildJobGraph(deps: JobGraphDeps, checkpointer: BaseCheckpointSaver) {
  return new StateGraph(JobState)
    .addNode('beginStrategic', makeBeginStrategicNode(deps))
    .addNode('strategicModel', makePhaseModelNode(deps, 'strategic'))
    .addNode('strategicTools', makePhaseToolsNode(deps, 'strategic'))
    .addNode('endStrategic', makeEndStrategicNode(deps))
    .addNode('reviewGate', makeReviewGateNode(deps))
    .addNode('beginTactical', makeBeginTacticalNode(deps))
    .addNode('tacticalModel', makePhaseModelNode(deps, 'tactical'))
    .addNode('tacticalTools', makePhaseToolsNode(deps, 'tactical'))
    .addNode('awaitWrite', makeAwaitWriteNode(deps))
    .addNode('executeWrite', makeExecuteWriteNode(deps))
    .addNode('endTactical', makeEndTacticalNode(deps))
    .addNode('completeJob', makeCompleteJobNode(deps))
    .addNode('failJob', makeFailJobNode(deps))
    .addEdge(START, 'beginStrategic')
    .addEdge('beginStrategic', 'strategicModel')
    .addConditionalEdges('strategicModel', routeAfterModel, { tools: 'strategicTools', end: 'endStrategic' })
    .addConditionalEdges('strategicTools', routeAfterStrategicTools, { model: 'strategicModel', end: 'endStrategic' })
    .addConditionalEdges('endStrategic', routeAfterStrategic, {
      review: 'reviewGate',
      tactical: 'beginTactical',
      complete: 'completeJob',
      fail: 'failJob',
    })
    .addConditionalEdges('reviewGate', routeAfterReview, {
      strategic: 'beginStrategic',
      tactical: 'beginTactical',
      review: 'reviewGate',
    })
    .addEdge('beginTactical', 'tacticalModel')
    .addConditionalEdges('tacticalModel', routeAfterModel, { tools: 'tacticalTools', end: 'endTactical' })
    .addConditionalEdges('tacticalTools', routeAfterTacticalTools, {
      approval: 'awaitWrite',
      model: 'tacticalModel',
      end: 'endTactical',
    })
    .addEdge('awaitWrite', 'executeWrite')
    .addConditionalEdges('executeWrite', routeAfterWrite, { approval: 'awaitWrite', model: 'tacticalModel' })
    .addConditionalEdges('endTactical', routeAfterTactical, {
      strategic: 'beginStrategic',
      complete: 'completeJob',
      fail: 'failJob',
    })
    .addEdge('completeJob', END)
    .addEdge('failJob', END)
    .compile({ checkpointer });
}

export type JobGraph = ReturnType<typeof buildJobGraph>;
