/**
 * JobsModel: the jobs, sweeps and usage polled, with the pipelines the
 * pipelines plugin follows (`followPipelines`): jobs of no sweep or
 * pipeline, sweeps of no pipeline and pipelines, paged and merged newest
 * first, a sweep or a pipeline one entry. An expanded sweep's runs are
 * asked with `GET jobs?group=…` (FollowedSweeps).
 *
 * Every ~2 s while a job is active and the Jobs section visible, every
 * ~15 s otherwise, nothing while the tab is hidden; failures back off up to
 * a minute. Ends are announced once each: a job's through `ended`, a
 * sweep's through `sweepEnded`, a pipeline's through `pipelineEnded`; a
 * running job whose GPU idled too long through `gpuIdle`.
 */
import { ISignal, Signal } from '@lumino/signaling';

import { askEach } from '../api/request';
import type {
  IJob,
  IPipeline,
  ISweep,
  IUsageReport,
  IUsageWeeks,
  JobState
} from '../api/types';
import { PolledModel, TickPhase } from '../components/polled';
import { JobsClient } from './client';
import { JobEntry, mergeEntries } from './entries';
import { JobUsage } from './usage/model';
import { ExpandedIn, FollowedSweeps } from './sweeps/followed';
import { isActive, isActiveState } from './format';
import { IdleWarnings } from './usage/idle';
import type { IPipelineSource } from './tokens';

export { MAX_RUNS_LISTED } from './sweeps/followed';
export type { JobEntry } from './entries';

/** Milliseconds between two requests while a job is active and shown. */
export const ACTIVE_INTERVAL = 2000;
/** Milliseconds between two requests otherwise. */
export const IDLE_INTERVAL = 15000;
/** The longest wait between two tries while the server fails. */
export const MAX_BACKOFF = 60000;
/** Jobs (and sweeps) listed per page. */
export const PAGE_SIZE = 50;

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
    this._usage = new JobUsage(this.client);
    this._idle = new IdleWarnings(
      this.client,
      () => this._usage.gpuIdleSeconds,
      job => this._gpuIdle.emit(job)
    );
    this._sweeps = new FollowedSweeps(this.client, sweep =>
      this._sweepEnded.emit(sweep)
    );
  }

  readonly client: JobsClient;
  /** A pipeline seen queued or running has ended (once per end). */
  get pipelineEnded(): ISignal<this, IPipeline> {
    return this._pipelineEnded;
  }

  /** List the pipelines of `source` (the pipelines plugin's) as entries. */
  followPipelines(source: IPipelineSource | null): void {
    this._pipelines?.ended.disconnect(this._onPipelineEnded, this);
    this._pipelines = source;
    source?.ended.connect(this._onPipelineEnded, this);
    this.emitChanged();
    void this.refresh().catch(() => undefined);
  }

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

  /** A sweep has ended: its last run ended (once per sweep). */
  get sweepEnded(): ISignal<this, ISweep> {
    return this._sweepEnded;
  }

  /** Jobs, newest first, or null before the first answer. */
  get jobs(): IJob[] | null {
    return this._jobs;
  }

  /**
   * The list as the section shows it: jobs and sweeps, newest first (each
   * sweep once); null before the first answer. Where one list has more
   * pages, what is older than its last entry waits for "show more".
   */
  get entries(): JobEntry[] | null {
    if (this._jobs === null) {
      return null;
    }
    const sweeps = this._sweeps;
    return mergeEntries(
      { items: this._jobs, total: this._jobsTotal },
      { items: sweeps.page, total: sweeps.total },
      sweeps.unlisted,
      {
        items: this._pipelines?.page ?? [],
        total: this._pipelines?.total ?? 0
      },
      this._pipelines?.unlisted ?? []
    );
  }

  /** Jobs and sweeps recorded but not listed yet (older pages). */
  get more(): number {
    const shown = (this.entries ?? []).filter(
      entry => entry.kind !== 'sweep' || !this._sweeps.isUnlisted(entry.id)
    ).length;
    return Math.max(0, this.total - shown);
  }

  /** The weekly GPU-hours, oldest week first; null until asked. */
  get weeks(): IUsageWeeks | null {
    return this._usage.weeks;
  }

  /** Seconds a running job's GPU may idle before a warning. */
  get gpuIdleSeconds(): number {
    return this._usage.gpuIdleSeconds;
  }

  /** A running job's GPU has idled too long (once per job). */
  get gpuIdle(): ISignal<this, IJob> {
    return this._gpuIdle;
  }

  /** A pipeline just submitted: listed at once. */
  addPipeline(pipeline: IPipeline): void {
    this._pipelines?.add(pipeline);
    this.emitChanged();
    void this.refresh().catch(() => undefined);
  }

  /** A sweep as last asked (or null). */
  sweep(id: string): ISweep | null {
    return this._sweeps.get(id);
  }

  /** The runs of an expanded sweep, in its order; null until asked. */
  runsOf(id: string): IJob[] | null {
    return this._sweeps.runsOf(id);
  }

  /** Whether the row of this sweep lists its runs (in the sidebar, or the Jobs view). */
  isExpanded(id: string, where: ExpandedIn = 'sidebar'): boolean {
    return this._sweeps.isExpanded(id, where);
  }

  /** List the runs of a sweep under its row (asked at once), or stop. */
  setExpanded(
    id: string,
    expanded: boolean,
    where: ExpandedIn = 'sidebar'
  ): void {
    if (expanded === this._sweeps.isExpanded(id, where)) {
      return;
    }
    this._sweeps.setExpanded(id, expanded, where);
    if (expanded) {
      void this.refresh().catch(() => undefined);
    }
    this.emitChanged();
  }

  /** All jobs of no sweep or pipeline, all sweeps and pipelines, recorded. */
  get total(): number {
    return this._jobsTotal + this._sweeps.total + (this._pipelines?.total ?? 0);
  }

  get limit(): number {
    return this._limit;
  }

  get usage(): IUsageReport | null {
    return this._usage.report;
  }

  /** A job known to the list, or a run of an expanded sweep (or null). */
  find(id: string): IJob | null {
    const listed = this._jobs?.find(job => job.id === id);
    if (listed) {
      return listed;
    }
    return this._sweeps.runs.find(job => job.id === id) ?? null;
  }

  /** List one more page. */
  async showMore(): Promise<void> {
    this._limit += PAGE_SIZE;
    await this.refresh();
  }

  /** A job just submitted: listed at once, followed until it ends. */
  add(job: IJob): void {
    this._states.set(job.id, job.state);
    if (job.group_id === null) {
      this._jobs = [job, ...(this._jobs ?? []).filter(j => j.id !== job.id)];
      this._jobsTotal += 1;
    }
    this._usage.invalidate();
    this.emitChanged();
    void this.refresh().catch(() => undefined);
  }

  /** A sweep just submitted: listed at once, followed until it ends. */
  addSweep(sweep: ISweep): void {
    this._sweeps.add(sweep);
    this._usage.invalidate();
    this.emitChanged();
    void this.refresh().catch(() => undefined);
  }

  /** Cancel the active runs of a sweep (no confirmation here). */
  async cancelSweep(id: string): Promise<ISweep> {
    return this.busyWhile(id, async () => {
      this._cancelled.add(id);
      const sweep = await this.client.cancelSweep(id);
      this._sweeps.set(sweep);
      return sweep;
    });
  }

  /** Run the failed and cancelled runs of a sweep again. */
  async retrySweep(id: string): Promise<ISweep> {
    return this.busyWhile(id, async () => {
      const sweep = await this.client.retrySweep(id);
      this._sweeps.set(sweep, true);
      return sweep;
    });
  }

  /** Show the Jobs section, scrolled to `id` when given. */
  reveal(id: string | null = null): void {
    this._reveal.emit(id);
  }

  /** Cancel a job (no confirmation here). */
  async cancel(id: string): Promise<IJob> {
    return this.busyWhile(id, async () => {
      this._cancelled.add(id);
      const job = await this.client.cancel(id);
      this._replace(job);
      return job;
    });
  }

  /** Delete a job's record and folder (no confirmation here). */
  async remove(id: string): Promise<void> {
    await this.busyWhile(id, async () => {
      await this.client.remove(id);
      this._states.delete(id);
      this._sweeps.removeRun(id);
      if (this._jobs) {
        const before = this._jobs.length;
        this._jobs = this._jobs.filter(job => job.id !== id);
        if (this._jobs.length < before) {
          this._jobsTotal = Math.max(0, this._jobsTotal - 1);
        }
      }
      this._usage.invalidate();
    });
  }

  /** Whether the user cancelled this job from this page. */
  cancelledHere(id: string): boolean {
    return this._cancelled.has(id);
  }

  private _replace(job: IJob): void {
    if (this._jobs) {
      this._jobs = this._jobs.map(j => (j.id === job.id ? job : j));
    }
    this._sweeps.replaceRun(job);
  }

  /** Whether the regular tick should ask the server now. */
  private _due(): boolean {
    const active =
      (this._jobs ?? []).some(isActive) ||
      this._sweeps.anyActive ||
      (this._pipelines?.anyActive ?? false);
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
    const limit = this._limit;
    const [list, sweeps, usage] = await Promise.all([
      this.client.listJobs({ sweep: 'none', pipeline: 'none', limit }),
      this.client.listSweeps({ pipeline: 'none', limit }),
      this._usage.ask(),
      this._pipelines?.update(limit)
    ]);
    const jobs = list.items;
    const first = this._jobs === null;
    await this._sweeps.update(sweeps, first);
    // Active jobs pushed off the page are asked one by one.
    const onPage = new Set(jobs.map(job => job.id));
    const missing = [...this._states]
      .filter(([id, state]) => !onPage.has(id) && isActiveState(state))
      .map(([id]) => id);
    const seen = [
      ...jobs,
      ...(await askEach(
        missing,
        id => this.client.getJob(id),
        id => this._states.delete(id)
      ))
    ];

    let changed = false;
    for (const job of seen) {
      if (job.group_id !== null) {
        // Followed (and announced) as their sweep.
        continue;
      }
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
    this._jobsTotal = list.total;
    usage.apply();
    if (!usage.asked && changed) {
      // A job started or ended: its hours count now.
      this._usage.invalidate();
    }
    // Runs of collapsed sweeps are not listed: the sweep names its idle ones.
    await this._idle.check(
      [...seen, ...this._sweeps.runs],
      this._sweeps.idleRuns
    );
  }

  private _onPipelineEnded(_: unknown, ended: IPipeline): void {
    this._pipelineEnded.emit(ended);
  }

  private _idleInterval: number;
  private _pipelines: IPipelineSource | null = null;
  private _pipelineEnded = new Signal<this, IPipeline>(this);
  private _jobs: IJob[] | null = null;
  private _jobsTotal = 0;
  private _sweeps: FollowedSweeps;
  private _gpuIdle = new Signal<this, IJob>(this);
  private _limit = PAGE_SIZE;
  private _usage: JobUsage;
  private _idle: IdleWarnings;
  private _fetchedAt = 0;
  private _states = new Map<string, JobState>();
  private _cancelled = new Set<string>();
  private _ended = new Signal<this, IJob>(this);
  private _sweepEnded = new Signal<this, ISweep>(this);
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
