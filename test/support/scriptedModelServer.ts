// A local HTTP server speaking Gemini's REST API and OpenAI chat completions, driven by per-test
// scripts. The real clients are pointed at it with a base URL; it records what the model was shown.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Reply =
  /** `chunkDelayMs`: a streamed reply pauses between its pieces, so a client can be seen mid-stream. */
  | { text: string; chunkDelayMs?: number }
  | { json: unknown }
  | { functionCall: { name: string; args: object } }
  /** Several calls in one turn (Gemini parallel function calling / OpenAI tool_calls), answered in order. */
  | { functionCalls: { name: string; args: object }[] }
  | { error: { status: number; message: string; retryAfterSeconds?: number; geminiStatus?: string } }
  | { delayMs: number; then: Reply }
  | { safetyBlock: true }
  | { raw: string };

export interface RecordedRequest {
  provider: 'gemini' | 'openai';
  model: string;
  /** Path and query, as received. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  /** Every message text of the request concatenated (system, turns, tool calls and results). */
  text: string;
  stream: boolean;
}

export interface Rule {
  match?: (req: RecordedRequest) => boolean;
  /** How many requests this rule answers (default 1). */
  times?: number;
  reply: Reply;
}

export interface ScriptedModelServer {
  /** Base URL without a path: Gemini's client adds /v1beta, the OpenAI client should use `${url}/v1`. */
  url: string;
  /** Appends rules; they are consumed in order (first matching rule with times left). */
  script(rules: Rule[]): void;
  requests: RecordedRequest[];
  /** How embedding requests are answered from now on (default: bagOfWordsVector for every text). */
  embeddings(script: EmbeddingScript): void;
  /** Embedding requests (Gemini batchEmbedContents / embedContent, OpenAI /v1/embeddings), apart from `requests`. */
  embedRequests: { provider: 'gemini' | 'openai'; model: string; texts: string[] }[];
  close(): Promise<void>;
}

export interface EmbeddingScript {
  /** The vector of a text (deterministic); default bagOfWordsVector. */
  vectorOf?: (text: string) => number[];
  /** Answer every embedding request with this failure instead. */
  failure?: { status: number; message: string } | { garbage: true } | { delayMs: number };
}

/** A deterministic embedding: words hashed into 64 buckets (texts sharing words are similar, others are not). */
export function bagOfWordsVector(text: string): number[] {
  const vector = new Array<number>(64).fill(0);
  for (const word of text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 2)) {
    let h = 2166136261;
    for (const ch of word.replace(/s$/, '')) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
    const bucket = (h >>> 0) % 64;
    vector[bucket] = (vector[bucket] ?? 0) + 1;
  }
  return vector;
}

const GEMINI_EMBED_PATH = /^\/v1beta\/models\/([^/:]+):(batchEmbedContents|embedContent)$/;

/** Token counts every scripted reply reports, so tests can assert usage and cost exactly. */
export const SCRIPTED_USAGE = { inputTokens: 1000, outputTokens: 200 } as const;

interface ActiveRule {
  rule: Rule;
  left: number;
}

const GEMINI_PATH = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

export async function startScriptedModelServer(): Promise<ScriptedModelServer> {
  const rules: ActiveRule[] = [];
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`scripted model server failed: ${error instanceof Error ? error.message : String(error)}`);
    });
  });

  let embedScript: EmbeddingScript = {};
  const embedRequests: ScriptedModelServer['embedRequests'] = [];

  /** Embedding requests: answered from `embedScript`, recorded apart from the chat requests. */
  async function embed(url: URL, raw: string, res: ServerResponse): Promise<boolean> {
    const gemini = GEMINI_EMBED_PATH.exec(url.pathname);
    if (!gemini && url.pathname !== '/v1/embeddings') return false;
    const body = (raw ? JSON.parse(raw) : {}) as Record<string, unknown>;
    const textsOf = (content: unknown): string =>
      isRecord(content) && Array.isArray(content.parts)
        ? content.parts.map((p) => (isRecord(p) && typeof p.text === 'string' ? p.text : '')).join('')
        : '';
    const texts = gemini
      ? gemini[2] === 'batchEmbedContents'
        ? (Array.isArray(body.requests) ? body.requests : []).map((r) => textsOf(isRecord(r) ? r.content : undefined))
        : [textsOf(body.content)]
      : (Array.isArray(body.input) ? body.input : [body.input]).map((t) => String(t));
    embedRequests.push({
      provider: gemini ? 'gemini' : 'openai',
      model: gemini ? (gemini[1] ?? '') : typeof body.model === 'string' ? body.model : '',
      texts,
    });
    const failure = embedScript.failure;
    if (failure && 'delayMs' in failure) await new Promise((resolve) => setTimeout(resolve, failure.delayMs));
    else if (failure && 'garbage' in failure) {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>502 Bad Gateway</html>');
      return true;
    } else if (failure) {
      res.writeHead(failure.status, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { code: failure.status, message: failure.message, status: defaultGeminiStatus(failure.status) },
        }),
      );
      return true;
    }
    const vectors = texts.map(embedScript.vectorOf ?? bagOfWordsVector);
    res.writeHead(200, { 'content-type': 'application/json' });
    if (!gemini)
      res.end(
        JSON.stringify({
          object: 'list',
          model: body.model,
          data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
        }),
      );
    else if (gemini[2] === 'batchEmbedContents')
      res.end(JSON.stringify({ embeddings: vectors.map((values) => ({ values })) }));
    else res.end(JSON.stringify({ embedding: { values: vectors[0] } }));
    return true;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'POST' && (await embed(url, raw, res))) return;
    const recorded = recordRequest(req, url, raw);
    if (!recorded) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end(`scripted model server: no route for ${req.method ?? '?'} ${url.pathname}${url.search}`);
      return;
    }
    requests.push(recorded);
    const active = rules.find((r) => r.left > 0 && (r.rule.match?.(recorded) ?? true));
    if (!active) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: {
            code: 500,
            message: `scripted model server: unscripted ${recorded.provider} request #${requests.length} to ${recorded.path} (model ${recorded.model}): ${recorded.text.slice(0, 300)}`,
            status: 'UNSCRIPTED',
          },
        }),
      );
      return;
    }
    active.left -= 1;
    await answer(recorded, active.rule.reply, req, res);
  }

  function answer(recorded: RecordedRequest, reply: Reply, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if ('delayMs' in reply) {
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (res.destroyed || res.writableEnded) resolve();
          else resolve(answer(recorded, reply.then, req, res));
        }, reply.delayMs);
        timers.add(timer);
        // A client that gave up (timeout, cancel) closes the socket: stop waiting for it.
        res.on('close', () => {
          clearTimeout(timer);
          timers.delete(timer);
          resolve();
        });
      });
    }
    if ('raw' in reply) {
      res.writeHead(200, { 'content-type': recorded.stream ? 'text/event-stream' : 'application/json' });
      res.end(reply.raw);
      return Promise.resolve();
    }
    if ('error' in reply) {
      const { status, message, retryAfterSeconds, geminiStatus } = reply.error;
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (retryAfterSeconds !== undefined) headers['retry-after'] = String(retryAfterSeconds);
      const body =
        recorded.provider === 'gemini'
          ? { error: { code: status, message, status: geminiStatus ?? defaultGeminiStatus(status) } }
          : { error: { message, type: openAiErrorType(status), code: geminiStatus ?? null } };
      res.writeHead(status, headers);
      res.end(JSON.stringify(body));
      return Promise.resolve();
    }
    if (recorded.provider === 'gemini') return writeGemini(recorded, reply, res, timers);
    writeOpenAi(recorded, reply, res);
    return Promise.resolve();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    script(newRules) {
      for (const rule of newRules) rules.push({ rule, left: rule.times ?? 1 });
    },
    requests,
    embeddings(script) {
      embedScript = script;
    },
    embedRequests,
    close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

type ContentReply = Exclude<Reply, { error: unknown } | { delayMs: number } | { raw: string }>;

async function writeGemini(
  recorded: RecordedRequest,
  reply: ContentReply,
  res: ServerResponse,
  timers: Set<NodeJS.Timeout>,
): Promise<void> {
  const usageMetadata = {
    promptTokenCount: SCRIPTED_USAGE.inputTokens,
    candidatesTokenCount: SCRIPTED_USAGE.outputTokens,
    totalTokenCount: SCRIPTED_USAGE.inputTokens + SCRIPTED_USAGE.outputTokens,
  };
  const base = { usageMetadata, modelVersion: recorded.model, responseId: 'scripted' };
  let chunks: object[];
  if ('safetyBlock' in reply) {
    chunks = [{ promptFeedback: { blockReason: 'SAFETY' }, ...base }];
  } else if ('functionCall' in reply || 'functionCalls' in reply) {
    const calls = 'functionCall' in reply ? [reply.functionCall] : reply.functionCalls;
    chunks = [
      {
        candidates: [
          {
            content: { role: 'model', parts: calls.map((functionCall) => ({ functionCall })) },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        ...base,
      },
    ];
  } else {
    const text = 'text' in reply ? reply.text : JSON.stringify(reply.json);
    const pieces = recorded.stream ? splitText(text) : [text];
    chunks = pieces.map((piece, i) => {
      const last = i === pieces.length - 1;
      return {
        candidates: [
          { content: { role: 'model', parts: [{ text: piece }] }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) },
        ],
        ...(last ? base : { modelVersion: recorded.model }),
      };
    });
  }
  if (recorded.stream) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const pause = 'text' in reply ? (reply.chunkDelayMs ?? 0) : 0;
    for (const [i, chunk] of chunks.entries()) {
      if (i > 0 && pause > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            timers.delete(timer);
            resolve();
          }, pause);
          timers.add(timer);
        });
        if (res.destroyed) return;
      }
      res.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
    }
    res.end();
  } else {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(chunks[0]));
  }
}

function writeOpenAi(recorded: RecordedRequest, reply: ContentReply, res: ServerResponse): void {
  const usage = {
    prompt_tokens: SCRIPTED_USAGE.inputTokens,
    completion_tokens: SCRIPTED_USAGE.outputTokens,
    total_tokens: SCRIPTED_USAGE.inputTokens + SCRIPTED_USAGE.outputTokens,
  };
  const common = { id: 'chatcmpl-scripted', created: Math.floor(Date.now() / 1000), model: recorded.model };
  let content: string | null = null;
  let toolCalls: object[] | undefined;
  let finishReason = 'stop';
  if ('safetyBlock' in reply) finishReason = 'content_filter';
  else if ('functionCall' in reply || 'functionCalls' in reply) {
    const calls = 'functionCall' in reply ? [reply.functionCall] : reply.functionCalls;
    toolCalls = calls.map((call, i) => ({
      id: `call_scripted_${i + 1}`,
      type: 'function',
      function: { name: call.name, arguments: JSON.stringify(call.args) },
    }));
    finishReason = 'tool_calls';
  } else content = 'text' in reply ? reply.text : JSON.stringify(reply.json);

  if (!recorded.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        ...common,
        object: 'chat.completion',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content, ...(toolCalls ? { tool_calls: toolCalls } : {}) },
            finish_reason: finishReason,
          },
        ],
        usage,
      }),
    );
    return;
  }
  const event = (choices: object[], extra: object = {}): string =>
    `data: ${JSON.stringify({ ...common, object: 'chat.completion.chunk', choices, ...extra })}\n\n`;
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(event([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]));
  for (const piece of content === null ? [] : splitText(content)) {
    res.write(event([{ index: 0, delta: { content: piece }, finish_reason: null }]));
  }
  if (toolCalls) {
    res.write(
      event([{ index: 0, delta: { tool_calls: toolCalls.map((c, index) => ({ index, ...c })) }, finish_reason: null }]),
    );
  }
  res.write(event([{ index: 0, delta: {}, finish_reason: finishReason }]));
  res.write(event([], { usage }));
  res.end('data: [DONE]\n\n');
}

/** Splits text into a few pieces so streaming delivers several deltas. */
function splitText(text: string): string[] {
  const pieces = text.match(/\S+\s*|\s+/g) ?? [text];
  return pieces.length > 0 ? pieces : [''];
}

function recordRequest(req: IncomingMessage, url: URL, raw: string): RecordedRequest | undefined {
  if (req.method !== 'POST') return undefined;
  let body: unknown;
  try {
    body = raw ? JSON.parse(raw) : undefined;
  } catch {
    body = raw;
  }
  const path = `${url.pathname}${url.search}`;
  const gemini = GEMINI_PATH.exec(url.pathname);
  if (gemini) {
    return {
      provider: 'gemini',
      model: gemini[1] ?? '',
      path,
      headers: req.headers,
      body,
      text: collectStrings(body).join('\n'),
      stream: gemini[2] === 'streamGenerateContent',
    };
  }
  if (url.pathname === '/v1/chat/completions') {
    const record = isRecord(body) ? body : {};
    return {
      provider: 'openai',
      model: typeof record.model === 'string' ? record.model : '',
      path,
      headers: req.headers,
      body,
      text: collectStrings(record.messages).join('\n'),
      stream: record.stream === true,
    };
  }
  return undefined;
}

/**
 * The message text a model sees: text parts, system instructions, function calls and responses
 * (Gemini `contents`/`systemInstruction`; OpenAI `messages`), leaving generation config out.
 */
function collectStrings(value: unknown): string[] {
  if (!isRecord(value) && !Array.isArray(value)) return [];
  if (Array.isArray(value)) return value.flatMap(collectStrings);
  const out: string[] = [];
  for (const [key, inner] of Object.entries(value)) {
    if (key === 'generationConfig' || key === 'tools' || key === 'response_format' || key === 'model') continue;
    if (typeof inner === 'string' && ['text', 'content', 'arguments'].includes(key)) out.push(inner);
    else if ((key === 'functionCall' || key === 'functionResponse') && isRecord(inner)) out.push(JSON.stringify(inner));
    else out.push(...collectStrings(inner));
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function defaultGeminiStatus(status: number): string {
  if (status === 400) return 'INVALID_ARGUMENT';
  if (status === 401) return 'UNAUTHENTICATED';
  if (status === 403) return 'PERMISSION_DENIED';
  if (status === 404) return 'NOT_FOUND';
  if (status === 429) return 'RESOURCE_EXHAUSTED';
  if (status === 503) return 'UNAVAILABLE';
  return 'INTERNAL';
}

function openAiErrorType(status: number): string {
  if (status === 401 || status === 403) return 'invalid_request_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}
