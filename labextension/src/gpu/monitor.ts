/**
 * GpuMonitor: polls `GET gpu` on an interval and keeps the latest answer.
 *
 * The poll backs off on errors (up to 30 s) and stands by while the page is
 * hidden or whenever the `standby` callback says nobody is looking.
 */
import { IDisposable } from '@lumino/disposable';
import { IPoll, Poll } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';

import { ApiError, GpuEnvClient } from './api';
import { IGpuSnapshot } from './types';

/** The default refresh interval, in milliseconds (the settings' default too). */
export const DEFAULT_REFRESH_INTERVAL = 2000;
/** The shortest refresh interval accepted, in milliseconds. */
export const MIN_REFRESH_INTERVAL = 500;
/** The longest refresh interval accepted (an hour), in milliseconds. */
export const MAX_REFRESH_INTERVAL = 60 * 60 * 1000;
/** The longest wait between two tries while the server fails, in milliseconds. */
export const MAX_BACKOFF_INTERVAL = 30 * 1000;

export class GpuMonitor implements IDisposable {
  constructor(options: GpuMonitor.IOptions) {
    this._client = options.client;
    this._poll = new Poll({
      name: 'jupyter-gpu-env:gpu',
      factory: () => this._fetch(),
      frequency: frequencyOf(options.interval ?? DEFAULT_REFRESH_INTERVAL),
      standby: options.standby ?? 'when-hidden'
    });
  }

  /** Emitted after each answer or failure. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** The latest snapshot; kept (stale) while later requests fail. */
  get snapshot(): IGpuSnapshot | null {
    return this._snapshot;
  }

  /** The error of the latest request, or null when it succeeded. */
  get error(): ApiError | null {
    return this._error;
  }

  /** When the latest successful answer arrived. */
  get updatedAt(): Date | null {
    return this._updatedAt;
  }

  /** Milliseconds between two requests while the server answers. */
  get interval(): number {
    return this._poll.frequency.interval;
  }
  set interval(value: number) {
    if (clampInterval(value) !== this._poll.frequency.interval) {
      this._poll.frequency = frequencyOf(value);
    }
  }

  get isDisposed(): boolean {
    return this._poll.isDisposed;
  }

  /** Ask now, without waiting for the next tick; resolves after the answer. */
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
    try {
      this._snapshot = await this._client.getGpu();
      this._error = null;
      this._updatedAt = new Date();
    } catch (error) {
      this._error =
        error instanceof ApiError
          ? error
          : new ApiError(String(error), 0, 'client_error');
      this._changed.emit();
      // Rejecting makes the poll back off; the error is shown, never thrown.
      throw this._error;
    }
    this._changed.emit();
  }

  private _client: GpuEnvClient;
  private _poll: Poll;
  private _snapshot: IGpuSnapshot | null = null;
  private _error: ApiError | null = null;
  private _updatedAt: Date | null = null;
  private _changed = new Signal<this, void>(this);
}

export namespace GpuMonitor {
  export interface IOptions {
    client: GpuEnvClient;
    /** Milliseconds between two requests (at least 500). */
    interval?: number;
    /** When to skip requests: a Poll standby value or a callback. */
    standby?: Poll.Standby | (() => boolean | Poll.Standby);
  }
}

/**
 * The poll's frequency for an interval: back off on errors up to 30 s, or up
 * to the interval itself when it is longer (a Poll needs interval <= max).
 */
function frequencyOf(interval: number): IPoll.Frequency {
  const clamped = clampInterval(interval);
  return {
    interval: clamped,
    backoff: true,
    max: Math.max(MAX_BACKOFF_INTERVAL, clamped)
  };
}

/** Keep an interval setting within what the poll accepts. */
export function clampInterval(value: number): number {
  if (!Number.isFinite(value)) {
    return DEFAULT_REFRESH_INTERVAL;
  }
  return Math.min(
    MAX_REFRESH_INTERVAL,
    Math.max(MIN_REFRESH_INTERVAL, Math.round(value))
  );
}
