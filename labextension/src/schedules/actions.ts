/**
 * What a schedule's buttons and commands do: pause and resume, run now,
 * re-arm, take a new snapshot (asked first), edit (a dialog), delete (asked
 * first); each failure said in a notification with the server's words.
 * Also what the send dialog needs to make one, and its "scheduled" notice.
 */
import { Dialog, Notification, showDialog } from '@jupyterlab/apputils';

import { messageOf } from '../api/request';
import type { ISchedule } from '../api/types';
import { JobsModel } from '../jobs/model';
import { SchedulesClient } from './client';
import { editSchedule } from './edit';
import { describeNext } from './format';
import { SchedulesModel } from './model';

/** What the send dialog needs to offer "Repeat". */
export interface ISendSchedules {
  client: SchedulesClient;
  model: SchedulesModel;
}

/** Say a schedule was made, its next run, with "Open jobs". */
export function scheduleSent(schedule: ISchedule, open: () => void): void {
  const next = describeNext(schedule, Date.now() / 1000);
  Notification.success(
    `Scheduled '${schedule.name}': ${schedule.description}. ${next}.`,
    {
      autoClose: 6000,
      actions: [
        {
          label: 'Open jobs',
          caption: 'Show the schedule in the GPU Env sidebar',
          callback: open
        }
      ]
    }
  );
}

export class ScheduleActions {
  constructor(
    readonly model: SchedulesModel,
    readonly jobs: JobsModel
  ) {}

  /** Pause (`active` false) or resume it. */
  async setActive(schedule: ISchedule, active: boolean): Promise<void> {
    await this._try(
      `Could not ${active ? 'resume' : 'pause'} '${schedule.name}'`,
      () => this.model.update(schedule.id, { active })
    );
  }

  /** One run now, listed with the jobs. */
  async runNow(schedule: ISchedule): Promise<void> {
    await this._try(`Could not run '${schedule.name}'`, async () => {
      const job = await this.model.runNow(schedule.id);
      this.jobs.add(job);
      Notification.success(`Started a run of '${schedule.name}' now.`, {
        autoClose: 4000
      });
    });
  }

  async rearm(schedule: ISchedule): Promise<void> {
    await this._try(`Could not re-arm '${schedule.name}'`, async () => {
      const after = await this.model.rearm(schedule.id);
      Notification.success(
        `'${schedule.name}' is set up again. ${describeNext(after, Date.now() / 1000)}.`,
        { autoClose: 5000 }
      );
    });
  }

  /** Take a new snapshot of the notebook, once the user confirms. */
  async snapshot(schedule: ISchedule): Promise<void> {
    const answer = await showDialog({
      title: `Update the snapshot of '${schedule.name}'?`,
      body:
        `The next runs run ${schedule.notebook_path} as it is saved now; ` +
        'runs already started keep the snapshot they had.',
      buttons: [
        Dialog.cancelButton(),
        Dialog.okButton({ label: 'Update snapshot' })
      ]
    });
    if (!answer.button.accept) {
      return;
    }
    await this._try(`Could not update '${schedule.name}'`, async () => {
      await this.model.snapshot(schedule.id);
      Notification.success(
        `'${schedule.name}' now runs ${schedule.notebook_path} as saved now.`,
        { autoClose: 4000 }
      );
    });
  }

  /** Change its times, zone, overlap, name or values (a dialog). */
  async edit(schedule: ISchedule): Promise<void> {
    const changed = await editSchedule(schedule, this.model);
    if (changed) {
      Notification.success(
        `Changed '${changed.name}': ${changed.description}.`,
        { autoClose: 4000 }
      );
    }
  }

  /** Delete it once the user confirms; its runs stay as jobs. */
  async remove(schedule: ISchedule): Promise<void> {
    const answer = await showDialog({
      title: `Delete the schedule '${schedule.name}'?`,
      body:
        'No run of it starts any more (nothing is left waiting in the ' +
        'batch system). The runs it made stay in the Jobs list.',
      buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Delete' })]
    });
    if (!answer.button.accept) {
      return;
    }
    await this._try(`Could not delete '${schedule.name}'`, () =>
      this.model.remove(schedule.id)
    );
  }

  private async _try(
    failure: string,
    work: () => Promise<unknown>
  ): Promise<void> {
    try {
      await work();
    } catch (error) {
      Notification.error(`${failure}: ${messageOf(error)}`);
    }
  }
}
