/**
 * The `jupyter-gpu-env:schedules` plugin: the schedules model and its
 * commands; through `IJobsRegistry`, the Jobs section's Schedules group
 * (above the jobs) and the send dialog's "Repeat".
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import React from 'react';

import { JobActions } from '../jobs/actions';
import { JobsModel } from '../jobs/model';
import { IJobsGroup, IJobsModel, IJobsRegistry } from '../jobs/tokens';
import { PALETTE_CATEGORY } from '../sidebar/plugin';
import { ScheduleActions } from './actions';
import { SchedulesClient } from './client';
import { registerScheduleCommands } from './commands';
import { SchedulesModel } from './model';
import { SchedulesGroup } from './row';
import { RepeatPart } from './send-part';

export const schedulesPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-gpu-env:schedules',
  description:
    'Scheduled notebooks: "Repeat" in the send dialog, the Schedules group.',
  autoStart: true,
  requires: [IJobsModel, IJobsRegistry],
  optional: [ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    jobs: JobsModel,
    registry: IJobsRegistry,
    palette: ICommandPalette | null
  ): void => {
    const client = new SchedulesClient(app.serviceManager.serverSettings);
    const model = new SchedulesModel({ client });
    const actions = new ScheduleActions(model, jobs);
    const jobActions = new JobActions(jobs, app.commands);
    const group: IJobsGroup = {
      id: 'schedules',
      component: props => (
        <SchedulesGroup actions={actions} jobActions={jobActions} {...props} />
      ),
      viewed: visible => {
        model.viewed = visible;
      },
      refresh: () => model.refresh()
    };
    registry.addGroup(group);
    registry.addSendPart(() => new RepeatPart({ client, model }));
    registerScheduleCommands(app.commands, {
      actions,
      palette,
      category: PALETTE_CATEGORY
    });
  }
};
