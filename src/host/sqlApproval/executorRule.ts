/**
 * Who runs a held write once it is approved: one executor per write, whoever approved it and wherever (README
 * "Other agents"). An outside agent's proposal: only the agent that proposed it, with execute_approved; an ask run's
 * or a job's write: its owner (the run resumes with it); Run SQL with Review's own write: this window.
 * Plain data, no `vscode` import, so it is unit-tested.
 */
export type Executor = 'its agent' | 'its owner' | 'this window';

export function executorOf(write: { owner?: object; proposedBy?: string }): Executor {
  if (write.proposedBy !== undefined) return 'its agent';
  return write.owner ? 'its owner' : 'this window';
}

/** Whether approving here also runs it here (or through its owner in this window): false for an agent's proposal. */
export function runsInThisWindow(write: { owner?: object; proposedBy?: string }): boolean {
  return executorOf(write) !== 'its agent';
}
