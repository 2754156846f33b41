/**
 * TaskTracker: follows the server's long operations (clone, install, pack,
 * GPU check), for every feature that starts them.
 *
 * Each unfinished task is asked with `GET tasks/{id}`, every 500 ms at
 * first, less often while nothing moves (up to 4 s) and after errors (up to
 * 15 s), until it is final; the poll stands by while nothing runs. The
 * tracker lives outside React, so tasks survive any re-render of the panel;
 * `attach()` picks up tasks that were already running when the page was
 * (re)loaded. A finished task stays listed a few seconds, so its last word
 * can be read.
 */
import { ServerConnection } from '@jupyterlab/services';
import { DisposableDelegate, IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { ApiClient, ApiError, enc } from '../api/request';
import type { ITask, ITaskList, TaskState } from '../api/types';
import { PolledModel, TickPhase } from '../components/polled';

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

/** The task calls of the REST API. */
export class TasksClient extends ApiClient {
  async list(): Promise<ITask[]> {
    return (await this.request<ITaskList>('GET', 'tasks')).tasks;
  }

  get(id: string): Promise<ITask> {
    return this.request('GET', `tasks/${enc(id)}`);
  }

  /** Cancel a task; 409 when it has already finished. */
  cancel(id: string): Promise<ITask> {
    return this.request('DELETE', `tasks/${enc(id)}`);
  }
}

export class TaskTracker extends PolledModel {
  constructor(options: TaskTracker.IOptions) {
    super({
      name: 'jupyter-gpu-env:tasks',
      interval: TASK_POLL_INTERVAL,
      maxBackoff: TASK_POLL_MAX_BACKOFF
    });
    this._client = new TasksClient(options.serverSettings);
    this._kinds = options.kinds ? new Set(options.kinds) : null;
    this._linger = options.linger ?? TASK_LINGER;
  }

  /** Emitted once per task when it reaches a final state. */
  get finished(): ISignal<this, ITask> {
    return this._finished;
  }

  /** Tracked tasks, oldest first: running ones and those just finished. */
  get tasks(): ITask[] {
    return [...this._tasks.values()];
  }

  /**
   * Have `attach()` pick up tasks of `kinds` too (a feature's own kinds);
   * disposing the handle forgets them again.
   */
  follow(kinds: readonly string[]): IDisposable {
    const added = kinds.filter(kind => !this._kinds?.has(kind));
    this._kinds ??= new Set();
    for (const kind of added) {
      this._kinds.add(kind);
    }
    return new DisposableDelegate(() => {
      for (const kind of added) {
        this._kinds?.delete(kind);
      }
    });
  }

  /** Follow `task` until it ends (a no-op when it is tracked already). */
  track(task: ITask): void {
    if (this.isDisposed || this._tasks.has(task.id)) {
      return;
    }
    this._tasks.set(task.id, task);
    this._delay = TASK_POLL_INTERVAL;
    this.emitChanged();
    if (isFinal(task)) {
      this._end(task);
    }
  }

  /** `task` once it has ended: followed until then. */
  ended(task: ITask): Promise<ITask> {
    this.track(task);
    const known = this._tasks.get(task.id) ?? task;
    if (isFinal(known)) {
      return Promise.resolve(known);
    }
    return new Promise(resolve => {
      const heard = (_: this, done: ITask): void => {
        if (done.id === task.id) {
          this._finished.disconnect(heard);
          resolve(done);
        }
      };
      this._finished.connect(heard);
    });
  }

  /**
   * Track the server's unfinished tasks (of the tracked kinds): those
   * started before this page was loaded, or from another tab.
   */
  async attach(): Promise<void> {
    const tasks = await this._client.list();
    for (const task of tasks.reverse()) {
      if (!isFinal(task) && this._wanted(task)) {
        this.track(task);
      }
    }
  }

  /** Ask the server to cancel; the poll reports the final state. */
  async cancel(id: string): Promise<void> {
    try {
      this._update(await this._client.cancel(id));
    } catch (error) {
      // 409: it finished meanwhile; the next poll says how.
      if (!(error instanceof ApiError && error.status === 409)) {
        throw error;
      }
    }
  }

  override dispose(): void {
    for (const timer of this._timers) {
      window.clearTimeout(timer);
    }
    this._timers.clear();
    this._tasks.clear();
    super.dispose();
  }

  protected async fetch(phase: TickPhase): Promise<void | false> {
    const running = this._running();
    const due = Date.now() - this._askedAt >= this._delay;
    if (running.length === 0 || (phase === 'resolved' && !due)) {
      return false;
    }
    this._askedAt = Date.now();
    let moved = false;
    for (const before of running) {
      let task: ITask;
      try {
        task = await this._client.get(before.id);
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) {
          // The server forgot it (restarted without its state): stop asking.
          this._end({
            ...before,
            state: 'failed',
            reason: 'not_found',
            message: error.message
          });
          continue;
        }
        throw error;
      }
      moved ||=
        task.progress !== before.progress || task.message !== before.message;
      this._update(task);
    }
    this._delay = moved
      ? TASK_POLL_INTERVAL
      : Math.min(this._delay * 1.5, TASK_POLL_MAX_INTERVAL);
  }

  /** Nothing to ask while no task runs. */
  protected override isWanted(): boolean {
    return this._running().length > 0;
  }

  private _running(): ITask[] {
    // Called by the poll's first check, before the fields are set.
    if (!this._tasks) {
      return [];
    }
    return this.tasks.filter(task => !isFinal(task));
  }

  private _wanted(task: ITask): boolean {
    return this._kinds === null || this._kinds.has(task.kind);
  }

  private _update(task: ITask): void {
    const known = this._tasks.get(task.id);
    if (this.isDisposed || !known || isFinal(known)) {
      return;
    }
    if (isFinal(task)) {
      this._end(task);
    } else {
      this._tasks.set(task.id, task);
      this.emitChanged();
    }
  }

  private _end(task: ITask): void {
    this._tasks.set(task.id, task);
    this.emitChanged();
    this._finished.emit(task);
    const timer = window.setTimeout(() => {
      this._timers.delete(timer);
      if (this._tasks.delete(task.id)) {
        this.emitChanged();
      }
    }, this._linger);
    this._timers.add(timer);
  }

  private _client: TasksClient;
  private _kinds: Set<string> | null;
  private _linger: number;
  private _delay = TASK_POLL_INTERVAL;
  private _askedAt = 0;
  private _tasks = new Map<string, ITask>();
  private _timers = new Set<number>();
  private _finished = new Signal<this, ITask>(this);
}

export namespace TaskTracker {
  export interface IOptions {
    serverSettings?: ServerConnection.ISettings;
    /** Task kinds `attach()` picks up (all when omitted; see `follow`). */
    kinds?: readonly string[];
    /** How long a finished task stays listed, in ms. */
    linger?: number;
  }
}
