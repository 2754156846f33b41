/**
 * DaskModel: the clusters, asked while the Dask section is shown (or a
 * dashboard is open), every 10 s, and every 2 s while a cluster is
 * starting or stopping, so its new state shows as soon as it is reached.
 */
import type { IDaskCluster } from '../api/types';
import { PolledModel, scheduled } from '../components/polled';
import { DaskClient } from './client';
import { isChanging } from './format';

/** Milliseconds between two refreshes while every cluster is settled. */
export const DASK_REFRESH_INTERVAL = 10 * 1000;
/** Milliseconds between two refreshes while a cluster starts or stops. */
export const DASK_CHANGING_INTERVAL = 2 * 1000;

export class DaskModel extends PolledModel {
  constructor(
    readonly client: DaskClient,
    schedule: PolledModel.ISchedule = {}
  ) {
    super(scheduled('jupyter-gpu-env:dask', DASK_REFRESH_INTERVAL, schedule));
    this._settled = schedule.interval ?? DASK_REFRESH_INTERVAL;
  }

  /** Clusters, newest first, or null before the first answer. */
  get clusters(): IDaskCluster[] | null {
    return this._clusters;
  }

  /** Clusters beyond the first page, not listed. */
  get unlisted(): number {
    return this._unlisted;
  }

  /** The listed cluster `id`, if it is listed. */
  find(id: string): IDaskCluster | undefined {
    return this._clusters?.find(cluster => cluster.id === id);
  }

  /** Show a cluster as an action answered it, before the next tick. */
  update(cluster: IDaskCluster): void {
    const list = this._clusters ?? [];
    const index = list.findIndex(c => c.id === cluster.id);
    this._clusters =
      index < 0
        ? [cluster, ...list]
        : list.map(c => (c.id === cluster.id ? cluster : c));
    this._pace();
    this.emitChanged();
  }

  protected async fetch(): Promise<void> {
    const page = await this.client.list();
    this._clusters = page.items;
    this._unlisted = Math.max(0, page.total - page.items.length);
    this._pace();
  }

  /** Faster while a cluster starts or stops. */
  private _pace(): void {
    const changing = this._clusters?.some(isChanging) ?? false;
    this.interval = changing
      ? Math.min(DASK_CHANGING_INTERVAL, this._settled)
      : this._settled;
  }

  private _clusters: IDaskCluster[] | null = null;
  private _unlisted = 0;
  private _settled: number;
}
