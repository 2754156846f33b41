/**
 * JobsModel: the job list and the week's usage, polled.
 *
 * The runs of a sweep are listed as one entry, the sweep (`GET
 * jobs/groups/{id}` for its counts, asked while it is active); the runs of
 * a sweep whose row is expanded are asked with `GET jobs?group=…`. A sweep
 * is announced once through `groupEnded` when its last run ends, its runs
 * one by one are not.
 *
 * Every ~2 s while a job is queued or running and the Jobs section is
 * visible; every ~15 s otherwise (so that jobs ending while nobody looks are
 * still announced); nothing while the browser tab is hidden. Failed
 * requests back off up to a minute. A job seen queued or running and then
 * ended is announced once through `ended`.
 */
import { ISignal, Signal } from '@lumino/signaling';

import { ApiError } from '../api/request';
import type {
  GroupState,
  IJob,
  IJobGroup,
  IUsageReport,
  JobState
} from '../api/types';
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
/** The most runs of one sweep its expanded row lists (the API's page). */
export const MAX_RUNS_LISTED = 500;

/** An entry of the list: a job, or a sweep standing for its runs. */
export type JobEntry =
  | { kind: 'job'; job: IJob }
  | { kind: 'group'; id: string; group: IJobGroup | null; runs: IJob[] };

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

  /** A sweep has ended: its last run ended (once per sweep). */
  get groupEnded(): ISignal<this, IJobGroup> {
    return this._groupEnded;
  }

  /** Jobs, newest first, or null before the first answer. */
  get jobs(): IJob[] | null {
    return this._jobs;
  }

  /**
   * The list as the section shows it: jobs, and each sweep once where its
   * newest run is (with its runs on this page); null before the first
   * answer.
   */
  get entries(): JobEntry[] | null {
    if (this._jobs === null) {
      return null;
    }
    const entries: JobEntry[] = [];
    const placed = new Map<string, JobEntry & { kind: 'group' }>();
    for (const id of this._added) {
      if (!this._jobs.some(job => job.group_id === id)) {
        const entry = {
          kind: 'group' as const,
          id,
          group: this._groups.get(id) ?? null,
          runs: []
        };
        placed.set(id, entry);
        entries.push(entry);
      }
    }
    for (const job of this._jobs) {
      const id = job.group_id;
      if (id === null) {
        entries.push({ kind: 'job', job });
        continue;
      }
      let entry = placed.get(id);
      if (!entry) {
        entry = {
          kind: 'group',
          id,
          group: this._groups.get(id) ?? null,
          runs: []
        };
        placed.set(id, entry);
        entries.push(entry);
      }
      entry.runs.push(job);
    }
    return entries;
  }

  /** A sweep as last asked (or null). */
  group(id: string): IJobGroup | null {
    return this._groups.get(id) ?? null;
  }

  /** The runs of an expanded sweep, in its order; null until asked. */
  runsOf(id: string): IJob[] | null {
    return this._runs.get(id) ?? null;
  }

  /** Whether the row of this sweep lists its runs. */
  isExpanded(id: string): boolean {
    return this._expanded.has(id);
  }

  /** List the runs of a sweep under its row (asked at once), or stop. */
  setExpanded(id: string, expanded: boolean): void {
    if (expanded === this._expanded.has(id)) {
      return;
    }
    if (expanded) {
      this._expanded.add(id);
      void this.refresh().catch(() => undefined);
    } else {
      this._expanded.delete(id);
      this._runs.delete(id);
    }
    this.emitChanged();
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

  /** A job known to the list, or a run of an expanded sweep (or null). */
  find(id: string): IJob | null {
    const listed = this._jobs?.find(job => job.id === id);
    if (listed) {
      return listed;
    }
    for (const runs of this._runs.values()) {
      const run = runs.find(job => job.id === id);
      if (run) {
        return run;
      }
    }
    return null;
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

  /** A sweep just submitted: listed at once, followed until it ends. */
  addGroup(group: IJobGroup): void {
    this._groups.set(group.id, group);
    this._groupStates.set(group.id, group.state);
    this._added.add(group.id);
    this._usageAt = 0;
    this.emitChanged();
    void this.refresh().catch(() => undefined);
  }

  /** Cancel the active runs of a sweep (no confirmation here). */
  async cancelGroup(id: string): Promise<IJobGroup> {
    return this._withBusy(id, async () => {
      this._cancelled.add(id);
      const group = await this.client.cancelGroup(id);
      this._groups.set(id, group);
      return group;
    });
  }

  /** Run the failed and cancelled runs of a sweep again. */
  async retryGroup(id: string): Promise<IJobGroup> {
    return this._withBusy(id, async () => {
      const group = await this.client.retryGroup(id);
      this._groups.set(id, group);
      this._groupStates.set(id, group.state);
      return group;
    });
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
      for (const [group, runs] of this._runs) {
        this._runs.set(
          group,
          runs.filter(job => job.id !== id)
        );
      }
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
    for (const [group, runs] of this._runs) {
      this._runs.set(
        group,
        runs.map(j => (j.id === job.id ? job : j))
      );
    }
  }

  /** Whether the regular tick should ask the server now. */
  private _due(): boolean {
    const active =
      (this._jobs ?? []).some(isActive) ||
      [...this._groupStates.values()].some(isActiveState);
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
    await this._fetchGroups(jobs);
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
    this._total = list.total;
    this._usage = usage;
    if (wantUsage) {
      this._usageAt = Date.now();
    } else if (changed) {
      // A job started or ended: its hours count now.
      this._usageAt = 0;
    }
  }

  /**
   * Ask the sweeps of this page (and those followed but pushed off it):
   * those not known yet, still active, or whose listed runs changed state;
   * and the runs of the expanded ones.
   */
  private async _fetchGroups(jobs: IJob[]): Promise<void> {
    const changed = new Set<string>();
    const onPage = new Set<string>();
    const runStates = new Map<string, JobState>();
    for (const job of jobs) {
      if (job.group_id === null) {
        continue;
      }
      onPage.add(job.group_id);
      runStates.set(job.id, job.state);
      if (this._runStates.get(job.id) !== job.state) {
        changed.add(job.group_id);
      }
    }
    this._runStates = runStates;
    for (const id of onPage) {
      this._added.delete(id);
    }
    const wanted = [
      ...new Set([...onPage, ...this._added, ...this._groupStates.keys()])
    ].filter(id => {
      const known = this._groups.get(id);
      return !known || isActiveState(known.state) || changed.has(id);
    });
    const answers = await Promise.allSettled(
      wanted.map(id => this.client.getGroup(id))
    );
    answers.forEach((result, i) => {
      const id = wanted[i];
      if (result.status === 'rejected') {
        if (result.reason instanceof ApiError && result.reason.status === 404) {
          this._forgetGroup(id);
        }
        return;
      }
      const group = result.value;
      const before = this._groupStates.get(id);
      if (before && isActiveState(before) && !isActiveState(group.state)) {
        this._groupEnded.emit(group);
      }
      this._groups.set(id, group);
      if (isActiveState(group.state) || onPage.has(id)) {
        this._groupStates.set(id, group.state);
      } else {
        this._groupStates.delete(id);
      }
    });
    // Sweeps neither listed nor followed are forgotten.
    for (const id of this._groups.keys()) {
      if (
        !onPage.has(id) &&
        !this._added.has(id) &&
        !this._groupStates.has(id)
      ) {
        this._groups.delete(id);
      }
    }
    const expanded = [...this._expanded].filter(id => {
      const group = this._groups.get(id);
      return (
        group &&
        (!this._runs.has(id) ||
          isActiveState(group.state) ||
          changed.has(id) ||
          wanted.includes(id))
      );
    });
    const lists = await Promise.allSettled(
      expanded.map(id =>
        this.client.listJobs({
          group: id,
          limit: Math.min(
            MAX_RUNS_LISTED,
            Math.max(1, this._groups.get(id)?.size ?? 1)
          )
        })
      )
    );
    lists.forEach((result, i) => {
      if (result.status === 'fulfilled') {
        this._runs.set(expanded[i], result.value.items);
      }
    });
  }

  private _forgetGroup(id: string): void {
    this._groups.delete(id);
    this._groupStates.delete(id);
    this._added.delete(id);
    this._expanded.delete(id);
    this._runs.delete(id);
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
  private _groupEnded = new Signal<this, IJobGroup>(this);
  /** Sweeps asked, by id. */
  private _groups = new Map<string, IJobGroup>();
  /** Sweeps followed: listed on the page, or active (to announce their end). */
  private _groupStates = new Map<string, GroupState>();
  /** Sweeps submitted here whose runs the list does not show yet. */
  private _added = new Set<string>();
  private _expanded = new Set<string>();
  private _runs = new Map<string, IJob[]>();
  /** The states of the runs on the page at the latest answer. */
  private _runStates = new Map<string, JobState>();
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
