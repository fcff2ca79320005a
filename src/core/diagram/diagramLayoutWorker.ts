// The schema diagram's layout thread (bundled as dist/diagramLayoutWorker.js): elkjs (1.4 MB, its start and a
// 100-table layout take hundreds of milliseconds) runs here, off the extension host's thread and out of the page.
// One request at a time: { id, graph } in, { id, layout } or { id, error } out.
import ELK from 'elkjs/lib/elk.bundled.js';
import { parentPort } from 'node:worker_threads';
import type { DiagramGraph } from '../../shared/diagramProtocol';
import { elkLayout } from './elkLayout';

if (!parentPort) throw new Error('diagramLayoutWorker runs only as a worker thread');
const port = parentPort;
const elk = new ELK();

port.on('message', (message: { id: number; graph: DiagramGraph }) => {
  elkLayout(elk, message.graph).then(
    (layout) => port.postMessage({ id: message.id, layout }),
    (error: unknown) =>
      port.postMessage({ id: message.id, error: error instanceof Error ? error.message : String(error) }),
  );
});
