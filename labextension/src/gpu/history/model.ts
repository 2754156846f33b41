/**
 * GpuHistoryModel: polls `GET gpu/history` at a slow pace (10 s) for the
 * sparklines, only while somebody looks at them.
 */
import { PolledModel, scheduled } from '../../components/polled';
import type { IGpuHistory } from '../../api/types';
import { GpuClient } from '../client';

/** Milliseconds between two history requests. */
export const HISTORY_INTERVAL = 10 * 1000;

/** How much history the sparklines show, in seconds. */
export const HISTORY_SECONDS = 10 * 60;

export class GpuHistoryModel extends PolledModel {
  constructor(options: GpuHistoryModel.IOptions) {
    super(scheduled('jupyter-gpu-env:gpu-history', HISTORY_INTERVAL, options));
    this._client = options.client;
  }

  /** The latest history (kept while later requests fail); null at first. */
  get history(): IGpuHistory | null {
    return this._history;
  }

  protected async fetch(): Promise<void> {
    this._history = await this._client.history(HISTORY_SECONDS);
  }

  private _client: GpuClient;
  private _history: IGpuHistory | null = null;
}

export namespace GpuHistoryModel {
  /** `interval`: 10 s by default; `visible`: whether the sparklines show. */
  export interface IOptions extends PolledModel.ISchedule {
    client: GpuClient;
  }
}
