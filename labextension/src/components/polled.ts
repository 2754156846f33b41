/**
 * PolledModel: the base of every model that asks the server on an interval.
 *
 * One Poll that backs off while the server fails, stands by while the
 * browser tab is hidden or the owner says nobody looks (`visible`), asks at
 * once on `refresh()`, and emits `changed` after every answer or failure.
 * A subclass says what one tick asks in `fetch()`; throwing there is shown
 * through `error`, never thrown further.
 */
import { IDisposable } from '@lumino/disposable';
import { IPoll, Poll } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';

import { ApiError, asApiError } from '../api/request';

/** A tick's phase: `resolved` for a regular tick, others for refreshes. */
export type TickPhase = IPoll.Phase<'standby'>;

export abstract class PolledModel implements IDisposable {
  constructor(options: PolledModel.IOptions) {
    this._maxBackoff = options.maxBackoff ?? 5 * 60 * 1000;
    this._visible = options.visible ?? null;
    this._poll = new Poll<void, ApiError, 'standby'>({
      name: options.name,
      factory: state => this._tick(state.phase),
      frequency: this._frequency(options.interval),
      standby: () => document.hidden || !this.isWanted()
    });
  }

  /** Emitted after each answer or failure. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** The error of the latest tick, or null when it succeeded. */
  get error(): ApiError | null {
    return this._error;
  }

  /** When the latest successful answer arrived. */
  get updatedAt(): Date | null {
    return this._updatedAt;
  }

  /** Milliseconds between two ticks while the server answers. */
  get interval(): number {
    return this._poll.frequency.interval;
  }
  set interval(value: number) {
    if (value !== this._poll.frequency.interval) {
      this._poll.frequency = this._frequency(value);
    }
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** Whether the model asks no more (disposed, or done for good). */
  get isStopped(): boolean {
    return this._poll.isDisposed;
  }

  /** Ask now, without waiting for the next tick; resolves after the answer. */
  async refresh(): Promise<void> {
    if (this._poll.isDisposed) {
      return;
    }
    await this._poll.refresh();
    await this._poll.tick;
  }

  /**
   * Ask now even while standing by (a command run with the sidebar closed);
   * resolves after the answer, never rejects.
   */
  async load(): Promise<void> {
    await this._tick('refreshed').catch(() => undefined);
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._poll.dispose();
    Signal.clearData(this);
  }

  /**
   * Ask the server once. Resolve with `false` when this tick asked nothing
   * (no `changed`); reject to back off.
   */
  protected abstract fetch(phase: TickPhase): Promise<void | false>;

  /** Whether to ask now (the tab being visible): by default `visible()`. */
  protected isWanted(): boolean {
    return this._visible?.() ?? true;
  }

  /** Tell the views something changed between two ticks. */
  protected emitChanged(): void {
    this._changed.emit();
  }

  /** Whether an action on `id` is under way (one run by `busyWhile`). */
  isBusy(id: string): boolean {
    return this._busy.has(id);
  }

  /**
   * Run an action on `id` (a cancel, a delete): `isBusy(id)` meanwhile, the
   * views told before and after; then the list asked again, unless
   * `refresh` is false (the action's answer is all there is to show).
   */
  protected async busyWhile<T>(
    id: string,
    work: () => Promise<T>,
    refresh = true
  ): Promise<T> {
    this._busy.add(id);
    this.emitChanged();
    try {
      return await work();
    } finally {
      this._busy.delete(id);
      this.emitChanged();
      if (refresh) {
        void this.refresh().catch(() => undefined);
      }
    }
  }

  /** Stop polling for good (e.g. once what is followed has ended). */
  protected stop(): void {
    // After the current tick has resolved.
    void Promise.resolve().then(() => this._poll.dispose());
  }

  private async _tick(phase: TickPhase): Promise<void> {
    let asked: void | false;
    try {
      asked = await this.fetch(phase);
    } catch (error) {
      this._error = asApiError(error);
      this._changed.emit();
      // Rejecting makes the poll back off.
      throw this._error;
    }
    if (asked === false) {
      return;
    }
    this._error = null;
    this._updatedAt = new Date();
    this._changed.emit();
  }

  /** Back off on errors up to the maximum, or the interval when longer. */
  private _frequency(interval: number): IPoll.Frequency {
    return {
      interval,
      backoff: true,
      max: Math.max(this._maxBackoff, interval)
    };
  }

  private _poll: Poll<void, ApiError, 'standby'>;
  private _maxBackoff: number;
  private _visible: (() => boolean) | null;
  private _disposed = false;
  private _error: ApiError | null = null;
  private _updatedAt: Date | null = null;
  private _changed = new Signal<this, void>(this);
  private _busy = new Set<string>();
}

export namespace PolledModel {
  export interface IOptions extends ISchedule {
    /** The poll's name, e.g. `jupyter-gpu-env:gpu`. */
    name: string;
    /** Milliseconds between two ticks. */
    interval: number;
    /** The longest wait between two tries while the server fails (5 min). */
    maxBackoff?: number;
  }

  /** What the owner of a model chooses: how often it asks, and when. */
  export interface ISchedule {
    /** Milliseconds between two ticks (each model has its default). */
    interval?: number;
    /**
     * Whether somebody looks at what the model feeds; the poll stands by
     * while not (and always while the tab is hidden).
     */
    visible?: () => boolean;
  }
}

/**
 * The options of the poll `name` as its owner scheduled it: the owner's
 * interval, else the model's default.
 */
export function scheduled(
  name: string,
  defaultInterval: number,
  schedule: PolledModel.ISchedule
): PolledModel.IOptions {
  return {
    name,
    interval: schedule.interval ?? defaultInterval,
    visible: schedule.visible
  };
}
