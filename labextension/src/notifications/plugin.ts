/**
 * The `jupyter-gpu-env:notifications` plugin: a notification when a job, a
 * sweep or a pipeline ends and when a running job's GPU idles too long
 * (ends.ts; the jobs plugin's `notifyOnEnd` and `notifyOnGpuIdle` settings),
 * the browser notifications and the "Notifications…" dialog (command.ts).
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStateDB } from '@jupyterlab/statedb';

import { JobActions } from '../jobs/actions';
import { JobsModel } from '../jobs/model';
import { IJobsModel } from '../jobs/tokens';
import { PALETTE_CATEGORY } from '../sidebar/plugin';
import { registerNotifications } from './command';
import {
  notifyGpuIdle,
  notifyJobEnd,
  notifyPipelineEnd,
  notifySweepEnd
} from './ends';

/** The settings are the jobs plugin's (schema/jobs.json). */
const SETTINGS_ID = 'jupyter-gpu-env:jobs';

export const notificationsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-gpu-env:notifications',
  description:
    'Job, sweep and pipeline ends and idle GPUs told in notifications; where word goes.',
  autoStart: true,
  requires: [IJobsModel],
  optional: [ICommandPalette, ISettingRegistry, IStateDB],
  activate: (
    app: JupyterFrontEnd,
    model: JobsModel,
    palette: ICommandPalette | null,
    settingRegistry: ISettingRegistry | null,
    state: IStateDB | null
  ): void => {
    const { commands } = app;
    let settings: ISettingRegistry.ISettings | null = null;
    const setting = <T>(key: string, fallback: T): T =>
      (settings?.get(key).composite as T | undefined) ?? fallback;
    const onEnd = (): boolean => setting('notifyOnEnd', true);

    model.ended.connect((_, job) => {
      if (onEnd()) {
        notifyJobEnd(job, model, commands);
      }
    });
    model.sweepEnded.connect((_, sweep) => {
      if (onEnd()) {
        notifySweepEnd(sweep, model, commands);
      }
    });
    model.pipelineEnded.connect((_, pipeline) => {
      if (onEnd()) {
        notifyPipelineEnd(pipeline, commands);
      }
    });
    registerNotifications(app, {
      model,
      state,
      palette,
      category: PALETTE_CATEGORY,
      enabled: onEnd
    });
    const idleActions = new JobActions(model, commands);
    model.gpuIdle.connect((_, job) => {
      if (setting('notifyOnGpuIdle', true)) {
        notifyGpuIdle(job, idleActions);
      }
    });
    settingRegistry
      ?.load(SETTINGS_ID)
      .then(loaded => {
        settings = loaded;
      })
      .catch(reason => {
        console.error('jupyter-gpu-env: cannot load job settings.', reason);
      });
  }
};
