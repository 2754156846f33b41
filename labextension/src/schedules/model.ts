/**
 * SchedulesModel: the schedules, and the runs of those whose row is
 * expanded, polled as one (a PolledModel, as the jobs are: one poll for the
 * whole list, none per row).
 *
 * It asks every ~15 s while the Jobs section is shown, every ~2 s while an
 * expanded schedule has a run queued or running or a run is due within a
 * minute, and nothing while the section or the tab is hidden. An action
 * (pause, run now…) marks its schedule busy and asks again when it is done.
 */
import type { IJob, ISchedule, ISchedulePatch } from '../api/types';
import { PolledModel, TickPhase } from '../components/polled';
import { isActive } from '../jobs/format';
import { ACTIVE_INTERVAL, IDLE_INTERVAL, MAX_BACKOFF } from '../jobs/model';
import { SchedulesClient } from './client';

/** Runs listed under an expanded schedule. */
export const RUNS_LISTED = 10;

export class SchedulesModel extends PolledModel {
  constructor(options: SchedulesModel.IOptions) {
    super({
      name: 'jupyter-gpu-env:schedules',
      interval: ACTIVE_INTERVAL,
      maxBackoff: MAX_BACKOFF,
      visible: () => this.viewed()
    });
    this.client = options.client;
  }

  readonly client: SchedulesClient;

  /** Whether someone looks at the schedules (set by the Jobs section). */
  viewed: () => boolean = () => false;

  /** Schedules, newest first, or null before the first answer. */
  get schedules(): ISchedule[] | null {
    return this._schedules;
  }

  find(id: string): ISchedule | null {
    return this._schedules?.find(s => s.id === id) ?? null;
  }

  /** The runs of an expanded schedule, newest first; null until asked. */
  runsOf(id: string): IJob[] | null {
    return this._runs.get(id) ?? null;
  }

  isExpanded(id: string): boolean {
    return this._expanded.has(id);
  }

  /** List a schedule's runs under its row (asked at once), or stop. */
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

  /** A schedule just made: listed at once. */
  add(schedule: ISchedule): void {
    this._put(schedule);
    this.emitChanged();
    void this.refresh().catch(() => undefined);
  }

  /** Change it (pause and resume are `{ active }`). */
  update(id: string, patch: ISchedulePatch): Promise<ISchedule> {
    return this.busyWhile(id, async () =>
      this._put(await this.client.update(id, patch))
    );
  }

  /** One run now: the job. */
  runNow(id: string): Promise<IJob> {
    return this.busyWhile(id, () => this.client.runNow(id));
  }

  rearm(id: string): Promise<ISchedule> {
    return this.busyWhile(id, async () =>
      this._put(await this.client.rearm(id))
    );
  }

  snapshot(id: string): Promise<ISchedule> {
    return this.busyWhile(id, async () =>
      this._put(await this.client.snapshot(id))
    );
  }

  /** Delete it (no confirmation here); its runs stay as jobs. */
  async remove(id: string): Promise<void> {
    await this.busyWhile(id, async () => {
      await this.client.remove(id);
      this._schedules = (this._schedules ?? []).filter(s => s.id !== id);
      this._expanded.delete(id);
      this._runs.delete(id);
    });
  }

  private _put(schedule: ISchedule): ISchedule {
    const list = this._schedules ?? [];
    this._schedules = list.some(s => s.id === schedule.id)
      ? list.map(s => (s.id === schedule.id ? schedule : s))
      : [schedule, ...list];
    return schedule;
  }

  /** Whether the regular tick should ask now. */
  private _due(): boolean {
    const now = Date.now();
    const soon = (this._schedules ?? []).some(s =>
      s.next_runs.some(run => run.at * 1000 - now < 60000)
    );
    const running = [...this._runs.values()].some(runs => runs.some(isActive));
    const wait = soon || running ? ACTIVE_INTERVAL : IDLE_INTERVAL;
    return now - this._fetchedAt >= wait - ACTIVE_INTERVAL / 2;
  }

  protected async fetch(phase: TickPhase): Promise<void | false> {
    if (phase === 'resolved' && !this._due()) {
      return false;
    }
    this._fetchedAt = Date.now();
    const expanded = [...this._expanded];
    const [list, runs] = await Promise.all([
      this.client.list(),
      Promise.all(
        expanded.map(id =>
          this.client.runs(id, RUNS_LISTED).then(
            page => page.items,
            () => null
          )
        )
      )
    ]);
    this._schedules = list.items;
    const known = new Set(list.items.map(s => s.id));
    expanded.forEach((id, i) => {
      const items = runs[i];
      if (!known.has(id)) {
        this._expanded.delete(id);
        this._runs.delete(id);
      } else if (items) {
        this._runs.set(id, items);
      }
    });
  }

  private _schedules: ISchedule[] | null = null;
  private _expanded = new Set<string>();
  private _runs = new Map<string, IJob[]>();
  private _fetchedAt = 0;
}

export namespace SchedulesModel {
  export interface IOptions {
    client: SchedulesClient;
  }
}
