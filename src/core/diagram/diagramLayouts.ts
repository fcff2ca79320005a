/**
 * The schema diagram's layouts as the host keeps them: computed by ELK in a worker thread (started on first use,
 * ended when idle) and remembered per schema and graph hash, so a diagram drawn before (or reopened) comes with its
 * final layout at once. A graph asked for twice while laid out shares the one computation.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { DiagramLayout } from '../../shared/diagramGeometry';
import { sizeOf } from '../../shared/diagramGeometry';
import type { DiagramGraph } from '../../shared/diagramProtocol';

/** The worker's bundle, beside this code's (dist/ in the extension). */
export const DIAGRAM_LAYOUT_WORKER_FILE = 'diagramLayoutWorker.js';
const CACHED = 32;
const IDLE_MS = 120_000;

/** The cache key: the scope's schema and a hash of what the layout depends on (boxes' sizes, edges). */
export function layoutKey(graph: DiagramGraph): string {
  const hash = createHash('sha256');
  for (const t of graph.tables) {
    const { width, height } = sizeOf(t);
    hash.update(`${t.id}\u0000${width}\u0000${height}\u0001`);
  }
  for (const e of graph.edges) hash.update(`${e.id}\u0000${e.from}\u0000${e.to}\u0002`);
  return `${graph.scope.schema}\u0000${hash.digest('hex')}`;
}

interface Pending {
  resolve: (layout: DiagramLayout) => void;
  reject: (error: Error) => void;
}

export class DiagramLayouts {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private idle: NodeJS.Timeout | undefined;
  /** Insertion order is recency: a hit moves its entry to the end, the oldest goes first. */
  private readonly done = new Map<string, DiagramLayout>();
  private readonly running = new Map<string, Promise<DiagramLayout>>();

  constructor(private readonly workerScript = path.join(__dirname, DIAGRAM_LAYOUT_WORKER_FILE)) {}

  /** The graph's layout if it was computed before. */
  cached(graph: DiagramGraph): DiagramLayout | undefined {
    const key = layoutKey(graph);
    const layout = this.done.get(key);
    if (layout) {
      this.done.delete(key);
      this.done.set(key, layout);
    }
    return layout;
  }

  /** Starts the worker ahead of a layout (ELK's own start is most of a first layout's time). */
  warm(): void {
    try {
      this.ensureWorker();
    } catch {
      // The first layout says why (it tries again).
    }
  }

  layout(graph: DiagramGraph): Promise<DiagramLayout> {
    const hit = this.cached(graph);
    if (hit) return Promise.resolve(hit);
    const key = layoutKey(graph);
    const running = this.running.get(key);
    if (running) return running;
    const computed = this.compute(graph).then(
      (layout) => {
        this.running.delete(key);
        this.done.set(key, layout);
        for (const old of this.done.keys()) {
          if (this.done.size <= CACHED) break;
          this.done.delete(old);
        }
        return layout;
      },
      (error: unknown) => {
        this.running.delete(key);
        throw error;
      },
    );
    this.running.set(key, computed);
    return computed;
  }

  private compute(graph: DiagramGraph): Promise<DiagramLayout> {
    const id = this.nextId++;
    clearTimeout(this.idle);
    return new Promise<DiagramLayout>((resolve, reject) => {
      const worker = this.ensureWorker();
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, graph });
    });
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.workerScript);
    worker.unref();
    worker.on('message', (message: { id: number; layout?: DiagramLayout; error?: string }) => {
      const waiting = this.pending.get(message.id);
      if (!waiting) return;
      this.pending.delete(message.id);
      if (message.layout) waiting.resolve(message.layout);
      else waiting.reject(new Error(message.error ?? 'the layout failed'));
      if (this.pending.size === 0) this.idle = setTimeout(() => this.stopWorker(), IDLE_MS).unref();
    });
    // A worker stopped on purpose (idle, disposed) is no longer this.worker: its exit fails nothing.
    const fail = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the diagram's layout thread stopped (exit ${code})`)));
    this.worker = worker;
    return worker;
  }

  private stopWorker(): void {
    const worker = this.worker;
    this.worker = undefined;
    void worker?.terminate();
  }

  dispose(): void {
    clearTimeout(this.idle);
    this.stopWorker();
  }
}
