/**
 * GpuHistoryModel: polls `GET gpu/history` at a slow pace (10 s) for the
 * sparklines, only while somebody looks at them.
 */
import { PolledModel } from '../components/polled';
import type { IGpuHistory } from '../api/types';
import { GpuClient } from './client';

/** Milliseconds between two history requests. */
export const HISTORY_INTERVAL = 10 * 1000;

/** How much history the sparklines show, in seconds. */
export const HISTORY_SECONDS = 10 * 60;

export class GpuHistoryModel extends PolledModel {
  constructor(options: GpuHistoryModel.IOptions) {
    super({
      name: 'jupyter-gpu-env:gpu-history',
      interval: options.interval ?? HISTORY_INTERVAL,
      visible: options.visible
    });
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
  export interface IOptions {
    client: GpuClient;
    /** Milliseconds between two requests (10 s by default). */
    interval?: number;
    /** Whether the sparklines are shown (else the poll stands by). */
    visible?: () => boolean;
  }
}
