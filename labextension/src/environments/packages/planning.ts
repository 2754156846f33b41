/**
 * A dialog that plans before it closes: the Packages dialog and the one
 * that creates an environment from a file. Its accept button ("Review…")
 * asks the server for the plan (a `dry_run` task) while the dialog stays
 * open and says so ("Planning…", with the task's progress); when planning
 * fails (a package no channel has, a request that cannot be solved, a
 * channel that cannot be reached, a file that cannot be used) the dialog
 * keeps what was typed and shows why in words, with the tool's full output
 * one click away. It closes with the plan, for the user to review.
 */
import { Dialog } from '@jupyterlab/apputils';
import { ServerConnection } from '@jupyterlab/services';

import { ApiError, messageOf } from '../../api/request';
import type { IPackagesPlan, ITask } from '../../api/types';
import { FormBody, h } from '../../components/form';
import { TasksClient, isFinal } from '../../tasks/tracker';
import { cleanMessage } from '../format';
import { describeFailure, describePlanning } from './plan-lines';

/** How often the plan's task is asked about, at first and at most (ms). */
const PLAN_POLL_FIRST = 250;
const PLAN_POLL_MAX = 2000;

/** A plan that could not be made: the server's words, its reason, the log. */
export class PlanFailed extends Error {
  constructor(
    message: string,
    readonly reason: string | null,
    readonly output: string[] = []
  ) {
    super(message);
    this.name = 'PlanFailed';
  }
}

/**
 * Wait for the `plan` task `task` to end; `onTask` hears of each state
 * (its progress). Answers the plan, or throws PlanFailed with the task's
 * message and log.
 */
export async function waitPlan(
  tasks: TasksClient,
  task: ITask,
  onTask: (task: ITask) => void = () => undefined,
  stopped: () => boolean = () => false
): Promise<IPackagesPlan> {
  let delay = PLAN_POLL_FIRST;
  onTask(task);
  while (!isFinal(task) && !stopped()) {
    await new Promise(resolve => window.setTimeout(resolve, delay));
    delay = Math.min(delay * 2, PLAN_POLL_MAX);
    task = await tasks.get(task.id);
    onTask(task);
  }
  if (task.state !== 'succeeded') {
    throw new PlanFailed(
      cleanMessage(task.message || `Planning ${task.state}.`),
      task.reason ?? null,
      task.log_tail
    );
  }
  return task.result as IPackagesPlan;
}

export interface IPlanningOptions<T> {
  title: string;
  body: FormBody<T>;
  /** The accept button's label ("Review…"). */
  accept: string;
  serverSettings?: ServerConnection.ISettings;
  /** Start the plan of `value` (a `dry_run` request): its task. */
  plan(value: T): Promise<ITask>;
  /** Why `value` cannot be planned as it is (nothing asked), or null. */
  check?(value: T): string | null;
  /** What the dialog says when the plan would change nothing. */
  nothing: string;
  focusNodeSelector?: string;
}

const ACCEPT = 1;

/** A dialog whose accept button plans, and closes only with a plan. */
export class PlanningDialog<T> extends Dialog<T> {
  constructor(private readonly _options: IPlanningOptions<T>) {
    super({
      title: _options.title,
      body: _options.body,
      buttons: [
        Dialog.cancelButton(),
        Dialog.okButton({ label: _options.accept })
      ],
      defaultButton: ACCEPT,
      focusNodeSelector: _options.focusNodeSelector
    });
    this.addClass('jp-GpuEnv-planningDialog');
    this._tasks = new TasksClient(_options.serverSettings);
    this._status = h('div', {
      class: 'jp-GpuEnv-planStatus',
      'data-testid': 'gpu-env-plan-status',
      'aria-live': 'polite',
      hidden: true
    });
    _options.body.node.append(this._status);
  }

  /** The plan, once made (the dialog then closes). */
  plan: IPackagesPlan | null = null;
  /** The value it is the plan of. */
  value: T | null = null;

  override resolve(index?: number): void {
    if ((index ?? ACCEPT) !== ACCEPT) {
      this._stopPlanning();
      super.resolve(index);
    } else if (this.plan) {
      super.resolve(index);
    } else if (!this._task) {
      void this._plan();
    }
  }

  override reject(): void {
    // Backing out while planning stops the plan: nothing is left running.
    this._stopPlanning();
    super.reject();
  }

  override dispose(): void {
    this._stopPlanning();
    super.dispose();
  }

  private async _plan(): Promise<void> {
    const value = this._options.body.getValue();
    const unfit = this._options.check?.(value) ?? null;
    if (unfit !== null) {
      this._show('problem', h('p', {}, unfit));
      return;
    }
    const button = this.node.querySelector<HTMLButtonElement>(
      '.jp-Dialog-button.jp-mod-accept'
    );
    const stopped = () => this.isDisposed || this._task === null;
    this._task = 'starting';
    this.node.dataset.planning = 'true';
    if (button) {
      button.disabled = true;
    }
    this._showPlanning(null);
    try {
      const task = await this._options.plan(value);
      if (stopped()) {
        void this._tasks.cancel(task.id).catch(() => undefined);
        return;
      }
      this._task = task.id;
      const plan = await waitPlan(
        this._tasks,
        task,
        t => {
          if (!stopped()) {
            this._showPlanning(t);
          }
        },
        stopped
      );
      if (stopped()) {
        return;
      }
      if (plan.changes.length === 0) {
        this._show('nothing', h('p', {}, this._options.nothing));
        return;
      }
      this.plan = plan;
      this.value = value;
    } catch (error) {
      if (!stopped()) {
        this._showFailure(error);
      }
    } finally {
      this._task = null;
      delete this.node.dataset.planning;
      if (button) {
        button.disabled = false;
      }
    }
    if (this.plan) {
      super.resolve(ACCEPT);
    }
  }

  private _stopPlanning(): void {
    const task = this._task;
    this._task = null;
    if (task && task !== 'starting') {
      void this._tasks.cancel(task).catch(() => undefined);
    }
  }

  private _showPlanning(task: ITask | null): void {
    const bar = h('progress', { class: 'jp-GpuEnv-planProgress', max: 1 });
    if (task && task.progress > 0) {
      bar.value = task.progress;
    }
    this._show(
      'planning',
      h('p', {}, describePlanning(task?.progress ?? 0, task?.message ?? '')),
      bar
    );
  }

  private _showFailure(error: unknown): void {
    const failed = error instanceof PlanFailed ? error : null;
    const reason =
      failed?.reason ?? (error instanceof ApiError ? error.reason : null);
    const words = describeFailure(
      cleanMessage(messageOf(error)),
      reason,
      failed?.output ?? []
    );
    this._show(
      'failed',
      h(
        'p',
        { role: 'alert' },
        h('strong', {}, words.headline),
        ' ',
        words.summary
      ),
      h(
        'details',
        { class: 'jp-GpuEnv-planOutput', 'data-testid': 'gpu-env-plan-output' },
        h('summary', {}, 'Full output'),
        h('pre', {}, words.detail)
      )
    );
  }

  private _show(state: string, ...children: (HTMLElement | null)[]): void {
    this._status.dataset.state = state;
    this._status.replaceChildren(
      ...children.filter((c): c is HTMLElement => c !== null)
    );
    this._status.hidden = false;
    if (state === 'failed') {
      // Below the lists, the error may start under the fold: bring it up.
      this._status.scrollIntoView?.({ block: 'nearest' });
    }
  }

  private _tasks: TasksClient;
  private _status: HTMLDivElement;
  /** The plan's task while planning ('starting' until the server answers). */
  private _task: string | null = null;
}
