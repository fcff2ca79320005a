/**
 * One driver per job at a time, across windows, processes and machines (issue 12): a lease with a
 * heartbeat and a fencing token, in Redis when one is configured, else a lock file under .pgagent/leases/.
 * A lease is held while a job is being driven (a step of its graph), not while it waits for a person.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { AgentError } from '../platform/errors';
import type { Logger } from '../platform/logger';
import { processAlive } from '../fs/processAlive';
import { assertJobId } from './job';

/** Who drives a job, as stored in the lease (JSON) and shown to a second would-be driver. */
export interface LeaseHolder {
  host: string;
  pid: number;
  /** What drives it: "pg-agent job continue", "VS Code". */
  by: string;
  /** ISO time the lease was taken. */
  since: string;
  /** Epoch ms after which the lease is stale unless its heartbeat renews it. */
  expiresAt: number;
  /** Fencing token: grows with every new holder of this job's lease. */
  token: number;
  /** Tells two holders with the same host and pid apart (two runners in one process). */
  nonce: string;
}

/** Where leases live: compare-and-swap operations on one small record per job. */
export interface LeaseBackend {
  readonly kind: 'redis' | 'file';
  read(jobId: string): Promise<LeaseHolder | undefined>;
  /** Stores `next` only if the job has no lease; true when it did. */
  create(jobId: string, next: LeaseHolder, ttlMs: number): Promise<boolean>;
  /** Replaces the lease only if it is still `expected` (same nonce); true when it did. */
  replace(jobId: string, expected: LeaseHolder, next: LeaseHolder, ttlMs: number): Promise<boolean>;
  /** Removes the lease only if it is still `expected`. */
  remove(jobId: string, expected: LeaseHolder): Promise<void>;
  /** A token larger than any this job's lease had before. */
  nextToken(jobId: string): Promise<number>;
}

export interface JobLeaseOptions {
  /** What drives the job, shown to others ("pg-agent job continue", "VS Code"). */
  by: string;
  logger: Logger;
  /** Without a heartbeat a lease is stale after this long (default 30 s). */
  ttlMs?: number;
  now?: () => number;
}

export class JobLease {
  private timer: ReturnType<typeof setInterval> | undefined;
  private lost: LeaseHolder | undefined | null = null;

  constructor(
    readonly jobId: string,
    private current: LeaseHolder,
    private readonly backend: LeaseBackend,
    private readonly ttlMs: number,
    private readonly now: () => number,
    private readonly logger: Logger,
  ) {}

  get holder(): LeaseHolder {
    return this.current;
  }

  /** Renews the lease every third of its time to live; a renewal that finds another holder marks it lost. */
  startHeartbeat(): void {
    this.timer = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.ttlMs / 3)));
    this.timer.unref();
  }

  /** Throws JOB_BUSY when another driver holds the job now: every write of job state calls this first. */
  async assertHeld(): Promise<void> {
    if (this.lost === null) {
      const stored = await this.backend.read(this.jobId);
      if (stored?.nonce === this.current.nonce) return;
      this.lost = stored;
    }
    throw new AgentError(
      'JOB_BUSY',
      this.lost
        ? `Job ${this.jobId} was taken over by ${describeHolder(this.lost)}; this driver stops without writing.`
        : `Job ${this.jobId} lost its lease (it went stale); this driver stops without writing.`,
      'Show the job to see where it stands; continue it again if nobody else drives it.',
    );
  }

  async release(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.lost !== null) return;
    await this.backend.remove(this.jobId, this.current).catch((error: unknown) =>
      this.logger.warn('could not release a job lease; it goes stale by itself', {
        jobId: this.jobId,
        error: String(error),
      }),
    );
  }

  private async renew(): Promise<void> {
    if (this.lost !== null) return;
    const next = { ...this.current, expiresAt: this.now() + this.ttlMs };
    try {
      if (await this.backend.replace(this.jobId, this.current, next, this.ttlMs)) {
        this.current = next;
        return;
      }
      this.lost = await this.backend.read(this.jobId);
      this.logger.warn('job lease lost to another driver', {
        jobId: this.jobId,
        holder: this.lost ? describeHolder(this.lost) : 'none',
      });
    } catch (error) {
      // A renewal that cannot reach the store is not a loss yet: the lease stays valid until it expires.
      this.logger.warn('could not renew a job lease', { jobId: this.jobId, error: String(error) });
    }
  }
}

/** Takes and checks leases of one workspace (or team, with Redis). */
export class JobLeases {
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(
    private readonly backend: LeaseBackend,
    private readonly options: JobLeaseOptions,
  ) {
    this.ttlMs = options.ttlMs ?? 30_000;
    this.now = options.now ?? Date.now;
  }

  /** Who drives the job now, if anybody (a stale lease is reported as such, not hidden). */
  async holder(jobId: string): Promise<{ holder: LeaseHolder; stale: boolean } | undefined> {
    assertJobId(jobId);
    const holder = await this.backend.read(jobId);
    return holder ? { holder, stale: this.isStale(holder) } : undefined;
  }

  /** JOB_BUSY naming the holder when somebody drives the job now (a stale lease does not count). */
  async assertFree(jobId: string): Promise<void> {
    const current = await this.holder(jobId);
    if (current && !current.stale) throw busy(jobId, current.holder);
  }

  /**
   * The lease, or JOB_BUSY naming who holds it. A stale lease (expired, or held by a process of this host
   * that is gone) is taken over at once; `takeOver` also takes a live one from another host (the person
   * chose "Take over" knowing it is stale there).
   */
  async acquire(jobId: string, options: { takeOver?: boolean } = {}): Promise<JobLease> {
    assertJobId(jobId);
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await this.backend.read(jobId);
      const takeOver =
        current !== undefined && (this.isStale(current) || (options.takeOver === true && current.host !== hostname()));
      if (current && !takeOver) throw busy(jobId, current);
      const candidate: LeaseHolder = {
        host: hostname(),
        pid: process.pid,
        by: this.options.by,
        since: new Date(this.now()).toISOString(),
        expiresAt: this.now() + this.ttlMs,
        token: await this.backend.nextToken(jobId),
        nonce: randomBytes(8).toString('hex'),
      };
      const taken = current
        ? await this.backend.replace(jobId, current, candidate, this.ttlMs)
        : await this.backend.create(jobId, candidate, this.ttlMs);
      if (taken && current)
        this.options.logger.warn('took over a stale job lease', {
          jobId,
          from: describeHolder(current),
          token: candidate.token,
        });
      if (taken) {
        const lease = new JobLease(jobId, candidate, this.backend, this.ttlMs, this.now, this.options.logger);
        lease.startHeartbeat();
        return lease;
      }
    }
    const current = await this.backend.read(jobId);
    if (current) throw busy(jobId, current);
    throw new AgentError(
      'JOB_BUSY',
      `Job ${jobId} is being taken by several drivers at once.`,
      'Try again in a moment.',
    );
  }

  private isStale(holder: LeaseHolder): boolean {
    if (holder.expiresAt <= this.now()) return true;
    return holder.host === hostname() && !processAlive(holder.pid);
  }
}

/** "laptop:4242 (pg-agent job continue) since 14:02:11". */
export function describeHolder(holder: LeaseHolder): string {
  const time = holder.since.slice(11, 19);
  return `${holder.host}:${holder.pid} (${holder.by}) since ${time} UTC`;
}

function busy(jobId: string, holder: LeaseHolder): AgentError {
  return new AgentError(
    'JOB_BUSY',
    `Job ${jobId} is running in ${describeHolder(holder)}.`,
    'Watch it with pg-agent job show, or wait until it stops; a driver whose process is gone is taken over at once, one on another machine once its lease goes stale (30 s without a heartbeat).',
  );
}
