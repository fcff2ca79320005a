/**
 * `pg-agent guard --metrics HOST:PORT`: an HTTP endpoint answering GET /metrics in Prometheus's text format
 * (guardMetrics.ts) and nothing else (404; 405 for other methods). It serves figures, never a ticket's SQL or a
 * user's secret; bind it to loopback or a monitoring network.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GuardMetrics } from './guardMetrics';
import { PROMETHEUS_CONTENT_TYPE } from './promText';

export interface MetricsEndpoint {
  host: string;
  port: number;
  close(): Promise<void>;
}

export async function serveMetrics(metrics: GuardMetrics, host: string, port: number): Promise<MetricsEndpoint> {
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: the guard serves GET /metrics\n');
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('Use GET\n');
      return;
    }
    metrics.render().then(
      (text) => response.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE }).end(text),
      (error: unknown) => response.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(error)}\n`),
    );
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    host: address.address,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
