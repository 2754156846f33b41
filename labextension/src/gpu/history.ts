/**
 * GpuHistoryModel: polls `GET gpu/history` at a slow pace (10 s) for the
 * sparklines, only while somebody looks at them.
 */
import { IDisposable } from '@lumino/disposable';
import { Poll } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';

import { IServerSettingsHolder, getGpuHistory } from './api';
import { IGpuHistory } from './types';

/** Milliseconds between two history requests. */
export const HISTORY_INTERVAL = 10 * 1000;

/** How much history the sparklines show, in seconds. */
export const HISTORY_SECONDS = 10 * 60;

export class GpuHistoryModel implements IDisposable {
  constructor(options: GpuHistoryModel.IOptions) {
    this._client = options.client;
    this._poll = new Poll({
      name: 'jupyter-gpu-env:gpu-history',
      factory: () => this._fetch(),
      frequency: {
        interval: options.interval ?? HISTORY_INTERVAL,
        backoff: true,
        max: 5 * 60 * 1000
      },
      standby: options.standby ?? 'when-hidden'
    });
  }

  /** Emitted after each answer. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** The latest history; null until the first answer. */
  get history(): IGpuHistory | null {
    return this._history;
  }

  get isDisposed(): boolean {
    return this._poll.isDisposed;
  }

  /** Ask now; resolves after the answer. */
  async refresh(): Promise<void> {
    await this._poll.refresh();
    await this._poll.tick;
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._poll.dispose();
    Signal.clearData(this);
  }

  private async _fetch(): Promise<void> {
    // A failure keeps the last history; the poll backs off meanwhile.
    this._history = await getGpuHistory(this._client, HISTORY_SECONDS);
    this._changed.emit();
  }

  private _client: IServerSettingsHolder;
  private _poll: Poll;
  private _history: IGpuHistory | null = null;
  private _changed = new Signal<this, void>(this);
}

export namespace GpuHistoryModel {
  export interface IOptions {
    client: IServerSettingsHolder;
    /** Milliseconds between two requests (10 s by default). */
    interval?: number;
    /** When to skip requests: a Poll standby value or a callback. */
    standby?: Poll.Standby | (() => boolean | Poll.Standby);
  }
}
