/**
 * FollowedSweeps: the sweeps the Jobs list knows, for JobsModel.
 *
 * A sweep is followed while it is on the listed page, while it was
 * submitted here and the page does not show it yet, or while it is active
 * (asked one by one once pushed off the page, so that its end is still
 * announced). The runs of the sweeps whose rows are expanded are asked with
 * them, again only when the sweep is active or its counts moved.
 */
import { askEach } from '../../api/request';
import type { IJob, ISweep, SweepState } from '../../api/types';
import { JobsClient } from '../client';
import { isActiveState } from '../format';

/**
 * Where a sweep's row is opened: the sidebar's list, or the Jobs view's
 * table. Each keeps its own; a sweep's runs are asked while either shows
 * them.
 */
export type ExpandedIn = 'sidebar' | 'view';

/** The most runs of one sweep its expanded row lists (the API's page). */
export const MAX_RUNS_LISTED = 500;

export class FollowedSweeps {
  /**
   * @param client - asks the server.
   * @param ended - called once per sweep whose last run has ended.
   */
  constructor(
    private readonly _client: JobsClient,
    private readonly _ended: (sweep: ISweep) => void
  ) {}

  /** The sweeps of the listed page, newest first. */
  get page(): ISweep[] {
    return this._page;
  }

  /** All sweeps recorded (every page). */
  get total(): number {
    return this._total;
  }

  /** Sweeps submitted here that the listed page does not show yet. */
  get unlisted(): ISweep[] {
    const listed = new Set(this._page.map(sweep => sweep.id));
    return [...this._added]
      .filter(id => !listed.has(id))
      .map(id => this._sweeps.get(id))
      .filter((sweep): sweep is ISweep => !!sweep);
  }

  /** Whether this sweep was submitted here and is not listed yet. */
  isUnlisted(id: string): boolean {
    return this._added.has(id);
  }

  /** Whether a followed sweep has runs queued or running. */
  get anyActive(): boolean {
    return [...this._states.values()].some(isActiveState);
  }

  /** A sweep as last asked (or null). */
  get(id: string): ISweep | null {
    return this._sweeps.get(id) ?? null;
  }

  /** The runs of an expanded sweep, in its order; null until asked. */
  runsOf(id: string): IJob[] | null {
    return this._runs.get(id) ?? null;
  }

  /** The runs of every expanded sweep, as last asked. */
  get runs(): IJob[] {
    return [...this._runs.values()].flat();
  }

  /** The runs whose GPU idles, as their sweeps name them. */
  get idleRuns(): string[] {
    return [...this._sweeps.values()].flatMap(
      sweep => sweep.gpu_idle_runs ?? []
    );
  }

  /** Whether the row of this sweep lists its runs in `where`. */
  isExpanded(id: string, where: ExpandedIn = 'sidebar'): boolean {
    return this._expanded[where].has(id);
  }

  /** List a sweep's runs under its row in `where` from the next update, or stop. */
  setExpanded(
    id: string,
    expanded: boolean,
    where: ExpandedIn = 'sidebar'
  ): void {
    if (expanded) {
      this._expanded[where].add(id);
    } else {
      this._expanded[where].delete(id);
      this._dropRunsIfShut(id);
    }
  }

  /** A sweep just submitted: followed until the page shows it and it ends. */
  add(sweep: ISweep): void {
    this._sweeps.set(sweep.id, sweep);
    this._states.set(sweep.id, sweep.state);
    this._added.add(sweep.id);
  }

  /** A sweep's answer to an action; `follow` when its runs start again. */
  set(sweep: ISweep, follow = false): void {
    this._sweeps.set(sweep.id, sweep);
    if (follow) {
      this._states.set(sweep.id, sweep.state);
    }
  }

  /** A run's newer answer, in whichever expanded sweep lists it. */
  replaceRun(job: IJob): void {
    for (const [sweep, runs] of this._runs) {
      this._runs.set(
        sweep,
        runs.map(j => (j.id === job.id ? job : j))
      );
    }
  }

  /** A deleted run, out of the expanded sweeps' lists. */
  removeRun(id: string): void {
    for (const [sweep, runs] of this._runs) {
      this._runs.set(
        sweep,
        runs.filter(job => job.id !== id)
      );
    }
  }

  /**
   * Take a new page of sweeps; ask those followed but pushed off it, then
   * the runs of the expanded ones. `first`: the first answer, when nothing
   * is announced.
   */
  async update(
    page: { items: ISweep[]; total: number },
    first: boolean
  ): Promise<void> {
    const listed = page.items;
    const onPage = new Set(listed.map(sweep => sweep.id));
    for (const id of onPage) {
      this._added.delete(id);
    }
    const wanted = [
      ...new Set([...this._added, ...this._states.keys()])
    ].filter(
      id =>
        !onPage.has(id) &&
        (this._added.has(id) ||
          isActiveState(this._states.get(id) ?? 'succeeded'))
    );
    const seen = [
      ...listed,
      ...(await askEach(
        wanted,
        id => this._client.getSweep(id),
        id => this._forget(id)
      ))
    ];
    const changed = new Set<string>();
    for (const sweep of seen) {
      const { id } = sweep;
      const before = this._states.get(id);
      if (
        !first &&
        before &&
        isActiveState(before) &&
        !isActiveState(sweep.state)
      ) {
        this._ended(sweep);
        // In the sidebar its runs were opened to follow them: once all
        // have ended the row folds, so finished sweeps do not stack their
        // run cards (one opened after it ended stays open: that was asked
        // for). The Jobs view's table has the room: it stays as it is.
        this._expanded.sidebar.delete(id);
        this._dropRunsIfShut(id);
      }
      const key = `${sweep.state} ${JSON.stringify(sweep.counts)}`;
      if (this._keys.get(id) !== key) {
        changed.add(id);
      }
      this._keys.set(id, key);
      this._sweeps.set(id, sweep);
      if (isActiveState(sweep.state) || onPage.has(id)) {
        this._states.set(id, sweep.state);
      } else {
        this._states.delete(id);
      }
    }
    // Sweeps neither listed nor followed are forgotten.
    const keep = (id: string) =>
      onPage.has(id) || this._added.has(id) || this._states.has(id);
    for (const id of [...this._sweeps.keys()]) {
      if (!keep(id)) {
        this._sweeps.delete(id);
        this._keys.delete(id);
      }
    }
    for (const [id, state] of [...this._states]) {
      if (!onPage.has(id) && !isActiveState(state)) {
        this._states.delete(id);
      }
    }
    await this._askRuns(changed);
    this._page = listed;
    this._total = page.total;
  }

  /** Ask the runs of the expanded sweeps not asked yet, active or moved. */
  private async _askRuns(changed: Set<string>): Promise<void> {
    const open = new Set([...this._expanded.sidebar, ...this._expanded.view]);
    const expanded = [...open].filter(id => {
      const sweep = this._sweeps.get(id);
      return (
        sweep &&
        (!this._runs.has(id) || isActiveState(sweep.state) || changed.has(id))
      );
    });
    const lists = await Promise.allSettled(
      expanded.map(id =>
        this._client.listJobs({
          sweep: id,
          limit: Math.min(
            MAX_RUNS_LISTED,
            Math.max(1, this._sweeps.get(id)?.size ?? 1)
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

  /** A sweep's runs are kept while one of its rows shows them. */
  private _dropRunsIfShut(id: string): void {
    if (!this._expanded.sidebar.has(id) && !this._expanded.view.has(id)) {
      this._runs.delete(id);
    }
  }

  private _forget(id: string): void {
    this._sweeps.delete(id);
    this._keys.delete(id);
    this._states.delete(id);
    this._added.delete(id);
    this._expanded.sidebar.delete(id);
    this._expanded.view.delete(id);
    this._runs.delete(id);
  }

  private _page: ISweep[] = [];
  private _total = 0;
  /** Sweeps asked, by id. */
  private _sweeps = new Map<string, ISweep>();
  /** Each followed sweep's state and counts, to see what changed. */
  private _keys = new Map<string, string>();
  /** Sweeps followed: listed on the page, or active (to announce their end). */
  private _states = new Map<string, SweepState>();
  /** Sweeps submitted here whose runs the list does not show yet. */
  private _added = new Set<string>();
  private _expanded = {
    sidebar: new Set<string>(),
    view: new Set<string>()
  };
  private _runs = new Map<string, IJob[]>();
}
