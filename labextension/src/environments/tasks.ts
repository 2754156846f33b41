/**
 * TaskTracker: follows the server's long operations (clone, install, pack).
 *
 * Each tracked task is polled with `GET tasks/{id}`, every 500 ms at first,
 * less often while nothing moves (up to 4 s) and after errors (up to 15 s),
 * until it is final. The tracker lives outside React, so tasks survive any
 * re-render of the panel; `attach()` picks up tasks that were already running
 * when the page was (re)loaded. A finished task stays listed a few seconds,
 * so its last word can be read.
 */
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { ApiError, GpuEnvClient } from './api';
import { ITask, TaskState } from './types';

/** The first and fastest interval between two polls of a task, in ms. */
export const TASK_POLL_INTERVAL = 500;
/** The slowest interval while a task makes no progress, in ms. */
export const TASK_POLL_MAX_INTERVAL = 4000;
/** The slowest interval while the server fails, in ms. */
export const TASK_POLL_MAX_BACKOFF = 15000;
/** How long a finished task stays listed, in ms. */
export const TASK_LINGER = 4000;

const FINAL: ReadonlySet<TaskState> = new Set([
  'succeeded',
  'failed',
  'cancelled'
]);

/** Whether a task has ended (succeeded, failed or was cancelled). */
export function isFinal(task: ITask): boolean {
  return FINAL.has(task.state);
}

export class TaskTracker implements IDisposable {
  constructor(options: TaskTracker.IOptions) {
    this._client = options.client;
    this._kinds = options.kinds ?? null;
    this._linger = options.linger ?? TASK_LINGER;
  }

  /** Emitted whenever a task is added, moves, ends or is dropped. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Emitted once per task when it reaches a final state. */
  get finished(): ISignal<this, ITask> {
    return this._finished;
  }

  /** Tracked tasks, oldest first: running ones and those just finished. */
  get tasks(): ITask[] {
    return [...this._tasks.values()];
  }

  /** The unfinished task working on `target` (e.g. `environments/x`). */
  activeFor(target: string): ITask | undefined {
    return this.tasks.find(t => t.target === target && !isFinal(t));
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** Follow `task` until it ends (a no-op when it is tracked already). */
  track(task: ITask): void {
    if (this._disposed || this._tasks.has(task.id)) {
      return;
    }
    this._tasks.set(task.id, task);
    this._changed.emit();
    if (isFinal(task)) {
      this._end(task);
    } else {
      void this._follow(task.id);
    }
  }

  /**
   * Track the server's unfinished tasks (of the tracked kinds): those
   * started before this page was loaded, or from another tab.
   */
  async attach(): Promise<void> {
    const tasks = await this._client.listTasks();
    for (const task of tasks.reverse()) {
      if (!isFinal(task) && this._wanted(task)) {
        this.track(task);
      }
    }
  }

  /** Ask the server to cancel; the poll reports the final state. */
  async cancel(id: string): Promise<void> {
    try {
      const task = await this._client.cancelTask(id);
      this._update(task);
    } catch (error) {
      // 409: it finished meanwhile; the next poll says how.
      if (!(error instanceof ApiError && error.status === 409)) {
        throw error;
      }
    }
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    for (const timer of this._timers) {
      window.clearTimeout(timer);
    }
    this._timers.clear();
    this._tasks.clear();
    Signal.clearData(this);
  }

  private _wanted(task: ITask): boolean {
    return this._kinds === null || this._kinds.includes(task.kind);
  }

  private async _follow(id: string): Promise<void> {
    let delay = TASK_POLL_INTERVAL;
    let failures = 0;
    while (!this._disposed && this._tasks.has(id)) {
      await this._sleep(delay);
      const before = this._tasks.get(id);
      if (this._disposed || !before || isFinal(before)) {
        return;
      }
      try {
        const task = await this._client.getTask(id);
        failures = 0;
        const moved =
          task.progress !== before.progress || task.message !== before.message;
        this._update(task);
        delay = moved
          ? TASK_POLL_INTERVAL
          : Math.min(delay * 1.5, TASK_POLL_MAX_INTERVAL);
      } catch (error) {
        failures += 1;
        if (error instanceof ApiError && error.status === 404) {
          // The server forgot it (restarted without its state): stop asking.
          this._end({
            ...before,
            state: 'failed',
            reason: 'not_found',
            message: error.message
          });
          return;
        }
        delay = Math.min(
          TASK_POLL_INTERVAL * 2 ** failures,
          TASK_POLL_MAX_BACKOFF
        );
      }
    }
  }

  private _update(task: ITask): void {
    const known = this._tasks.get(task.id);
    if (this._disposed || !known || isFinal(known)) {
      return;
    }
    if (isFinal(task)) {
      this._end(task);
    } else {
      this._tasks.set(task.id, task);
      this._changed.emit();
    }
  }

  private _end(task: ITask): void {
    this._tasks.set(task.id, task);
    this._changed.emit();
    this._finished.emit(task);
    const timer = window.setTimeout(() => {
      this._timers.delete(timer);
      if (this._tasks.delete(task.id)) {
        this._changed.emit();
      }
    }, this._linger);
    this._timers.add(timer);
  }

  private _sleep(ms: number): Promise<void> {
    return new Promise(resolve => {
      const timer = window.setTimeout(() => {
        this._timers.delete(timer);
        resolve();
      }, ms);
      this._timers.add(timer);
    });
  }

  private _client: GpuEnvClient;
  private _kinds: readonly string[] | null;
  private _linger: number;
  private _tasks = new Map<string, ITask>();
  private _timers = new Set<number>();
  private _disposed = false;
  private _changed = new Signal<this, void>(this);
  private _finished = new Signal<this, ITask>(this);
}

export namespace TaskTracker {
  export interface IOptions {
    client: GpuEnvClient;
    /** Task kinds `attach()` picks up (all when omitted). */
    kinds?: readonly string[];
    /** How long a finished task stays listed, in ms. */
    linger?: number;
  }
}
