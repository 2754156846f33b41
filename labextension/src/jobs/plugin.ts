/**
 * The `jupyter-gpu-env:jobs` plugin: the jobs model (shared through
 * `IJobsModel`), the sidebar's "Jobs" section, the "Send to batch" notebook
 * toolbar button, the job commands (commands.ts), the Jobs view in the
 * main area (view/), the job-end notifications and the Notifications…
 * dialog (notify/).
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, IToolbarWidgetRegistry } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStateDB } from '@jupyterlab/statedb';
import { ToolbarButton } from '@jupyterlab/ui-components';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { sendToBatchIcon } from '../components/icons';
import { PALETTE_CATEGORY } from '../sidebar/plugin';
import { IGpuEnvSidebar } from '../sidebar/tokens';
import { JobActions } from './actions';
import { JobsClient } from './client';
import { JobCommandIDs } from './command-ids';
import { PipelineCommandIDs } from './pipelines/command-ids';
import { registerJobCommands } from './commands';
import { registerAdviceCommand } from '../advice/command';
import { registerJobsView } from './view/command';
import { JobsModel } from './model';
import {
  notifyGpuIdle,
  notifyJobEnd,
  notifyPipelineEnd,
  notifySweepEnd
} from './notify';
import { registerNotifications } from './notify/command';
import { ILastUsed } from './submit/resource-fields';
import { JobsSection } from './section';
import { Submitted, submitNotebook } from './submit/dialog';
import { runAgain } from './submit/rerun';
import { IJobsModel } from './tokens';
import { ScheduleActions } from './schedules/actions';
import { SchedulesClient } from './schedules/client';
import { registerScheduleCommands } from './schedules/commands';
import { SchedulesModel } from './schedules/model';

const PLUGIN_ID = 'jupyter-gpu-env:jobs';
/** Where the section stands among the sidebar's: after Images. */
export const JOBS_SECTION_RANK = 400;
/** The toolbar item's name in `jupyter.lab.toolbars` (schema/jobs.json). */
const TOOLBAR_ITEM = 'send-to-batch';
/** The state database key of the dialog's last-used choices. */
export const LAST_USED_KEY = 'jupyter-gpu-env:submit-last-used';

export const jobsPlugin: JupyterFrontEndPlugin<JobsModel> = {
  id: PLUGIN_ID,
  description:
    'Send notebooks to batch backends and follow the jobs in the sidebar.',
  autoStart: true,
  provides: IJobsModel,
  optional: [
    INotebookTracker,
    ICommandPalette,
    ISettingRegistry,
    IToolbarWidgetRegistry,
    IStateDB,
    IGpuEnvSidebar
  ],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker | null,
    palette: ICommandPalette | null,
    settingRegistry: ISettingRegistry | null,
    toolbarRegistry: IToolbarWidgetRegistry | null,
    state: IStateDB | null,
    sidebar: IGpuEnvSidebar | null
  ): JobsModel => {
    const { commands, shell, serviceManager } = app;
    const { serverSettings } = serviceManager;
    const client = new JobsClient(serverSettings);
    const model = new JobsModel({ client });
    const scheduleClient = new SchedulesClient(serverSettings);
    const schedules = new ScheduleActions(
      new SchedulesModel({ client: scheduleClient }),
      model
    );
    let settings: ISettingRegistry.ISettings | null = null;

    const setting = <T>(key: string, fallback: T): T =>
      (settings?.get(key).composite as T | undefined) ?? fallback;
    const openJobs = (job: Submitted | null): void => {
      sidebar?.activate();
      model.reveal(job?.id ?? null);
    };
    const submit = (panel: NotebookPanel): Promise<Submitted | null> =>
      submitNotebook(panel, {
        client,
        kernelspecs: serviceManager.kernelspecs,
        model,
        // UI state, not a setting: kept in the state database.
        last: async () =>
          ((await state?.fetch(LAST_USED_KEY)) as ILastUsed | undefined) ??
          null,
        remember: last => {
          const value = JSON.parse(
            JSON.stringify(last)
          ) as ReadonlyPartialJSONObject;
          state?.save(LAST_USED_KEY, value).catch(reason => {
            console.warn('jupyter-gpu-env: cannot remember choices.', reason);
          });
        },
        openJobs,
        schedules: { client: scheduleClient, model: schedules.model },
        openPipeline: pipeline =>
          void commands.execute(PipelineCommandIDs.open, { id: pipeline.id }),
        openResults: sweep =>
          void commands.execute(JobCommandIDs.sweepResults, {
            sweep: sweep.id
          })
      });
    const current = (): NotebookPanel | null => {
      const widget = tracker?.currentWidget ?? null;
      return widget && widget === shell.currentWidget ? widget : null;
    };

    const refreshEnabled = (): void => {
      commands.notifyCommandChanged(JobCommandIDs.submit);
      commands.notifyCommandChanged(JobCommandIDs.suggestGpu);
    };
    tracker?.currentChanged.connect(refreshEnabled);
    shell.currentChanged?.connect(refreshEnabled);

    const actions = new JobActions(model, commands);
    registerJobCommands(app, {
      model,
      client,
      actions,
      openJobs,
      submit,
      runAgain: id =>
        runAgain(id, { client, kernelspecs: serviceManager.kernelspecs }),
      current,
      palette,
      category: PALETTE_CATEGORY
    });
    registerJobsView(app, { actions, palette, category: PALETTE_CATEGORY });
    registerAdviceCommand(app, {
      client,
      id: JobCommandIDs.suggestGpu,
      send: JobCommandIDs.submit,
      current,
      palette,
      category: PALETTE_CATEGORY
    });
    registerScheduleCommands(commands, {
      actions: schedules,
      palette,
      category: PALETTE_CATEGORY
    });
    if (toolbarRegistry) {
      toolbarRegistry.addFactory<NotebookPanel>(
        'Notebook',
        TOOLBAR_ITEM,
        panel =>
          new ToolbarButton({
            icon: sendToBatchIcon,
            tooltip: 'Send to batch… (run this notebook in the background)',
            onClick: () => void submit(panel)
          })
      );
    }

    model.ended.connect((_, job) => {
      if (setting('notifyOnEnd', true)) {
        notifyJobEnd(job, model, commands);
      }
    });
    model.sweepEnded.connect((_, sweep) => {
      if (setting('notifyOnEnd', true)) {
        notifySweepEnd(sweep, model, commands);
      }
    });
    model.pipelines.ended.connect((_, pipeline) => {
      if (setting('notifyOnEnd', true)) {
        notifyPipelineEnd(pipeline, commands);
      }
    });
    registerNotifications(app, {
      model,
      state,
      palette,
      category: PALETTE_CATEGORY,
      enabled: () => setting('notifyOnEnd', true)
    });
    const idleActions = new JobActions(model, commands);
    model.gpuIdle.connect((_, job) => {
      if (setting('notifyOnGpuIdle', true)) {
        notifyGpuIdle(job, idleActions);
      }
    });
    if (settingRegistry) {
      settingRegistry
        .load(PLUGIN_ID)
        .then(loaded => {
          settings = loaded;
        })
        .catch(reason => {
          console.error('jupyter-gpu-env: cannot load job settings.', reason);
        });
    }
    sidebar?.addSection({
      id: 'jobs',
      title: 'Jobs',
      rank: JOBS_SECTION_RANK,
      widget: new JobsSection({ model, commands, schedules }),
      refresh: () =>
        Promise.all([model.refresh(), schedules.model.refresh()]).then(
          () => undefined
        )
    });
    return model;
  }
};
