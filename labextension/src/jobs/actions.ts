/**
 * What the Jobs section's buttons do: cancel and delete (confirmed first),
 * open the output, show the log; for a sweep, cancel its runs, retry the
 * failed ones, open its results. Output, log and the sweep's actions go
 * through commands, so that menus, notifications and the palette share them.
 */
import { Dialog, Notification, showDialog } from '@jupyterlab/apputils';
import { CommandRegistry } from '@lumino/commands';

import { ApiError, messageOf } from '../api/request';
import { JobsModel } from './model';
import type { IJob, ISweep } from '../api/types';
import { JobCommandIDs } from './command-ids';
import { isActive } from './format';

export class JobActions {
  constructor(
    readonly model: JobsModel,
    readonly commands: CommandRegistry
  ) {}

  /** Cancel `job` once the user confirms. */
  cancel(job: IJob): Promise<void> {
    return this._cancelConfirmed({
      title: `Cancel '${job.name}'?`,
      body:
        job.state === 'running'
          ? 'The job stops now; the output keeps the cells already run.'
          : 'The job leaves the queue without running.',
      button: 'Cancel job',
      cancel: () => this.model.cancel(job.id),
      ended: `'${job.name}' had already ended.`,
      failure: `Could not cancel '${job.name}'`
    });
  }

  /** Delete `job` (record and folder) once the user confirms. */
  async remove(job: IJob): Promise<void> {
    const running = isActive(job)
      ? ' It is still ' + job.state + ': it is cancelled first.'
      : '';
    const answer = await showDialog({
      title: `Delete '${job.name}'?`,
      body:
        `Its record and its folder (${job.job_dir}) with the output ` +
        `notebook and the log are deleted.${running}`,
      buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Delete' })]
    });
    if (!answer.button.accept) {
      return;
    }
    try {
      await this.model.remove(job.id);
    } catch (error) {
      Notification.error(`Could not delete '${job.name}': ${messageOf(error)}`);
    }
  }

  /** Cancel the active runs of `sweep` once the user confirms. */
  cancelSweep(sweep: ISweep): Promise<void> {
    const active = (sweep.counts.queued ?? 0) + (sweep.counts.running ?? 0);
    return this._cancelConfirmed({
      title: `Cancel the sweep '${sweep.name}'?`,
      body:
        `Its ${active} ${active === 1 ? 'run' : 'runs'} still queued or ` +
        'running stop now; the runs that ended keep their results.',
      button: 'Cancel sweep',
      cancel: () => this.model.cancelSweep(sweep.id),
      ended: `Every run of '${sweep.name}' had already ended.`,
      failure: `Could not cancel '${sweep.name}'`
    });
  }

  /** Run the failed and cancelled runs of `sweep` again. */
  async retrySweep(sweep: ISweep): Promise<void> {
    try {
      const after = await this.model.retrySweep(sweep.id);
      const again = (after.counts.queued ?? 0) + (after.counts.running ?? 0);
      Notification.success(
        `Sent ${again} ${again === 1 ? 'run' : 'runs'} of '${sweep.name}' again.`,
        { autoClose: 4000 }
      );
    } catch (error) {
      Notification.error(
        `Could not retry '${sweep.name}': ${messageOf(error)}`
      );
    }
  }

  openOutput(job: IJob): void {
    void this.commands.execute(JobCommandIDs.openOutput, { id: job.id });
  }

  showLog(job: IJob): void {
    void this.commands.execute(JobCommandIDs.showLog, { id: job.id });
  }

  /**
   * Ask `title`, then `cancel`; a 409 means it had ended meanwhile (said as
   * `ended`), any other failure is said after `failure`.
   */
  private async _cancelConfirmed(options: {
    title: string;
    body: string;
    button: string;
    cancel: () => Promise<unknown>;
    ended: string;
    failure: string;
  }): Promise<void> {
    const answer = await showDialog({
      title: options.title,
      body: options.body,
      buttons: [
        Dialog.cancelButton({ label: 'Keep running' }),
        Dialog.warnButton({ label: options.button })
      ]
    });
    if (!answer.button.accept) {
      return;
    }
    try {
      await options.cancel();
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) {
        Notification.info(options.ended, { autoClose: 4000 });
      } else {
        Notification.error(`${options.failure}: ${messageOf(error)}`);
      }
    }
  }
}
