/**
 * What the Jobs section's buttons do: cancel and delete (confirmed first),
 * open the output, show the log. Output and log go through commands, so that
 * notifications and the palette share them.
 */
import { Dialog, Notification, showDialog } from '@jupyterlab/apputils';
import { CommandRegistry } from '@lumino/commands';

import { ApiError, messageOf } from '../api/request';
import { JobsModel } from './model';
import type { IJob } from '../api/types';
import { isActive } from './format';

export namespace JobCommandIDs {
  export const submit = 'jupyter-gpu-env:submit-notebook';
  export const showLog = 'jupyter-gpu-env:show-job-log';
  export const openOutput = 'jupyter-gpu-env:open-job-output';
}

export class JobActions {
  constructor(
    readonly model: JobsModel,
    readonly commands: CommandRegistry
  ) {}

  /** Cancel `job` once the user confirms. */
  async cancel(job: IJob): Promise<void> {
    const answer = await showDialog({
      title: `Cancel '${job.name}'?`,
      body:
        job.state === 'running'
          ? 'The job stops now; the output keeps the cells already run.'
          : 'The job leaves the queue without running.',
      buttons: [
        Dialog.cancelButton({ label: 'Keep running' }),
        Dialog.warnButton({ label: 'Cancel job' })
      ]
    });
    if (!answer.button.accept) {
      return;
    }
    try {
      await this.model.cancel(job.id);
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) {
        Notification.info(`'${job.name}' had already ended.`, {
          autoClose: 4000
        });
      } else {
        Notification.error(
          `Could not cancel '${job.name}': ${messageOf(error)}`
        );
      }
    }
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

  openOutput(job: IJob): void {
    void this.commands.execute(JobCommandIDs.openOutput, { id: job.id });
  }

  showLog(job: IJob): void {
    void this.commands.execute(JobCommandIDs.showLog, { id: job.id });
  }
}
