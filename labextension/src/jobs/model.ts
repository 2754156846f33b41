/**
 * JobsModel: the job list and the week's usage, polled.
 *
 * Every ~2 s while a job is queued or running and the Jobs section is
 * visible; every ~15 s otherwise (so that jobs ending while nobody looks are
 * still announced); nothing while the browser tab is hidden. Failed
 * requests back off up to a minute. A job seen queued or running and then
 * ended is announced once through `ended`.
 */
import { ISignal, Signal } from '@lumino/signaling';

import { ApiError } from '../api/request';
import type { IJob, IUsageReport, JobState } from '../api/types';
import { PolledModel, TickPhase } from '../components/polled';
import { JobsClient } from './client';
import { isActive, isActiveState } from './format';

/** Milliseconds between two requests while a job is active and shown. */
export const ACTIVE_INTERVAL = 2000;
/** Milliseconds between two requests otherwise. */
export const IDLE_INTERVAL = 15000;
/** The longest wait between two tries while the server fails. */
export const MAX_BACKOFF = 60000;
/** Jobs listed per page. */
export const PAGE_SIZE = 50;
/** The usage line is asked again at least this often (ms). */
const USAGE_INTERVAL = 60000;

export class JobsModel extends PolledModel {
  constructor(options: JobsModel.IOptions) {
    // Stands by only while the tab is hidden: jobs ending while nobody
    // looks at the section are still announced.
    super({
      name: 'jupyter-gpu-env:jobs',
      interval: options.activeInterval ?? ACTIVE_INTERVAL,
      maxBackoff: MAX_BACKOFF
    });
    this.client = options.client;
    this._idleInterval = options.idleInterval ?? IDLE_INTERVAL;
  }

  readonly client: JobsClient;

  /** Whether someone looks at the jobs (set by the Jobs section). */
  viewed: () => boolean = () => false;

  /** A job seen queued or running has ended (once per job). */
  get ended(): ISignal<this, IJob> {
    return this._ended;
  }

  /** Someone asked to show a job (or the list) in the Jobs section. */
  get revealRequested(): ISignal<this, string | null> {
    return this._reveal;
  }

  /** Jobs, newest first, or null before the first answer. */
  get jobs(): IJob[] | null {
    return this._jobs;
  }

  /** All jobs recorded (the list shows the first `limit`). */
  get total(): number {
    return this._total;
  }

  get limit(): number {
    return this._limit;
  }

  get usage(): IUsageReport | null {
    return this._usage;
  }

  /** Whether a cancel or delete of this job is under way. */
  isBusy(id: string): boolean {
    return this._busy.has(id);
  }

  /** A job known to the list (or null). */
  find(id: string): IJob | null {
    return this._jobs?.find(job => job.id === id) ?? null;
  }

  /** List one more page. */
  async showMore(): Promise<void> {
    this._limit += PAGE_SIZE;
    await this.refresh();
  }

  /** A job just submitted: listed at once, followed until it ends. */
  add(job: IJob): void {
    this._states.set(job.id, job.state);
    this._jobs = [job, ...(this._jobs ?? []).filter(j => j.id !== job.id)];
    this._total += 1;
    this._usageAt = 0;
    this.emitChanged();
    void this.refresh().catch(() => undefined);
  }

  /** Show the Jobs section, scrolled to `id` when given. */
  reveal(id: string | null = null): void {
    this._reveal.emit(id);
  }

  /** Cancel a job (no confirmation here). */
  async cancel(id: string): Promise<IJob> {
    return this._withBusy(id, async () => {
      this._cancelled.add(id);
      const job = await this.client.cancel(id);
      this._replace(job);
      return job;
    });
  }

  /** Delete a job's record and folder (no confirmation here). */
  async remove(id: string): Promise<void> {
    await this._withBusy(id, async () => {
      await this.client.remove(id);
      this._states.delete(id);
      if (this._jobs) {
        this._jobs = this._jobs.filter(job => job.id !== id);
        this._total = Math.max(0, this._total - 1);
      }
      this._usageAt = 0;
    });
  }

  /** Whether the user cancelled this job from this page. */
  cancelledHere(id: string): boolean {
    return this._cancelled.has(id);
  }

  private async _withBusy<T>(id: string, work: () => Promise<T>): Promise<T> {
    this._busy.add(id);
    this.emitChanged();
    try {
      return await work();
    } finally {
      this._busy.delete(id);
      this.emitChanged();
      void this.refresh().catch(() => undefined);
    }
  }

  private _replace(job: IJob): void {
    if (this._jobs) {
      this._jobs = this._jobs.map(j => (j.id === job.id ? job : j));
    }
  }

  /** Whether the regular tick should ask the server now. */
  private _due(): boolean {
    const active = (this._jobs ?? []).some(isActive);
    const wait =
      active && this.viewed() ? ACTIVE_INTERVAL / 2 : this._idleInterval;
    return Date.now() - this._fetchedAt >= wait;
  }

  protected async fetch(phase: TickPhase): Promise<void | false> {
    // Refreshes, the first tick and retries after errors always ask.
    if (phase === 'resolved' && !this._due()) {
      return false;
    }
    this._fetchedAt = Date.now();
    const wantUsage = Date.now() - this._usageAt >= USAGE_INTERVAL;
    const [list, usage] = await Promise.all([
      this.client.listJobs({ limit: this._limit }),
      wantUsage ? this.client.usage() : Promise.resolve(this._usage)
    ]);
    const jobs = list.items;
    // Active jobs pushed off the page are asked one by one.
    const listed = new Set(jobs.map(job => job.id));
    const missing = [...this._states]
      .filter(([id, state]) => !listed.has(id) && isActiveState(state))
      .map(([id]) => id);
    const extra = await Promise.allSettled(
      missing.map(id => this.client.getJob(id))
    );
    const seen = [...jobs];
    extra.forEach((result, i) => {
      if (result.status === 'fulfilled') {
        seen.push(result.value);
      } else if (
        result.reason instanceof ApiError &&
        result.reason.status === 404
      ) {
        this._states.delete(missing[i]);
      }
    });

    const first = this._jobs === null;
    let changed = false;
    for (const job of seen) {
      const before = this._states.get(job.id);
      if (before !== job.state) {
        changed = true;
      }
      if (!first && before && isActiveState(before) && !isActive(job)) {
        this._ended.emit(job);
      }
      this._states.set(job.id, job.state);
    }
    this._jobs = jobs;
    this._total = list.total;
    this._usage = usage;
    if (wantUsage) {
      this._usageAt = Date.now();
    } else if (changed) {
      // A job started or ended: its hours count now.
      this._usageAt = 0;
    }
  }

  private _idleInterval: number;
  private _jobs: IJob[] | null = null;
  private _total = 0;
  private _limit = PAGE_SIZE;
  private _usage: IUsageReport | null = null;
  private _usageAt = 0;
  private _fetchedAt = 0;
  private _states = new Map<string, JobState>();
  private _busy = new Set<string>();
  private _cancelled = new Set<string>();
  private _ended = new Signal<this, IJob>(this);
  private _reveal = new Signal<this, string | null>(this);
}

export namespace JobsModel {
  export interface IOptions {
    client: JobsClient;
    /** Milliseconds between ticks while a job is active and shown. */
    activeInterval?: number;
    /** Milliseconds between requests otherwise. */
    idleInterval?: number;
  }
}
