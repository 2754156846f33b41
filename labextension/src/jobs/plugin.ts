/**
 * The `jupyter-gpu-env:jobs` plugin: the jobs model (shared through
 * `IJobsModel`), the sidebar's "Jobs" section, the "Send to batch" notebook
 * toolbar button, the job commands (commands.ts), the Jobs view in the
 * main area (view/); its views reopened after a reload. What other features
 * add to them (schedules, pipelines) comes through `IJobsRegistry`,
 * provided by `jupyter-gpu-env:jobs-registry`.
 */
import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, IToolbarWidgetRegistry } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { IStateDB } from '@jupyterlab/statedb';
import { ToolbarButton } from '@jupyterlab/ui-components';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { sendToBatchIcon } from '../components/icons';
import { PALETTE_CATEGORY } from '../sidebar/plugin';
import { IGpuEnvSidebar } from '../sidebar/tokens';
import { JobActions } from './actions';
import { JobsClient } from './client';
import { JobCommandIDs } from './command-ids';
import { registerJobCommands } from './commands';
import { registerAdviceCommand } from '../advice/command';
import { registerJobsView } from './view/command';
import { JobsModel } from './model';
import { ILastUsed } from './submit/resource-fields';
import { JobsSection } from './section';
import { Submitted, submitNotebook } from './submit/dialog';
import { runAgain } from './submit/rerun';
import { JobsRegistry } from './registry';
import { IJobsModel, IJobsRegistry } from './tokens';

const PLUGIN_ID = 'jupyter-gpu-env:jobs';
/** Where the section stands among the sidebar's: after Images. */
export const JOBS_SECTION_RANK = 400;
/** The toolbar item's name in `jupyter.lab.toolbars` (schema/jobs.json). */
const TOOLBAR_ITEM = 'send-to-batch';
/** The state database key of the dialog's last-used choices. */
export const LAST_USED_KEY = 'jupyter-gpu-env:submit-last-used';

/** What other features add to the jobs (`IJobsRegistry`), filled as they activate. */
export const jobsRegistryPlugin: JupyterFrontEndPlugin<IJobsRegistry> = {
  id: 'jupyter-gpu-env:jobs-registry',
  description:
    'What other features add to the jobs: groups, pipelines, send dialog parts.',
  autoStart: true,
  provides: IJobsRegistry,
  activate: (): IJobsRegistry => new JobsRegistry()
};

export const jobsPlugin: JupyterFrontEndPlugin<JobsModel> = {
  id: PLUGIN_ID,
  description:
    'Send notebooks to batch backends and follow the jobs in the sidebar.',
  autoStart: true,
  provides: IJobsModel,
  requires: [IJobsRegistry],
  optional: [
    INotebookTracker,
    ICommandPalette,
    IToolbarWidgetRegistry,
    IStateDB,
    IGpuEnvSidebar,
    ILayoutRestorer
  ],
  activate: (
    app: JupyterFrontEnd,
    registry: IJobsRegistry,
    tracker: INotebookTracker | null,
    palette: ICommandPalette | null,
    toolbarRegistry: IToolbarWidgetRegistry | null,
    state: IStateDB | null,
    sidebar: IGpuEnvSidebar | null,
    restorer: ILayoutRestorer | null
  ): JobsModel => {
    const { commands, shell, serviceManager } = app;
    const { serverSettings } = serviceManager;
    const client = new JobsClient(serverSettings);
    const model = new JobsModel({ client });
    const followPipelines = (): void =>
      model.followPipelines(registry.pipelines?.source ?? null);
    followPipelines();
    registry.changed.connect(followPipelines);
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
        parts: registry.sendParts,
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
      restorer,
      category: PALETTE_CATEGORY
    });
    registerJobsView(app, {
      actions,
      registry,
      palette,
      restorer,
      category: PALETTE_CATEGORY
    });
    registerAdviceCommand(app, {
      client,
      id: JobCommandIDs.suggestGpu,
      send: JobCommandIDs.submit,
      current,
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

    sidebar?.addSection({
      id: 'jobs',
      title: 'Jobs',
      rank: JOBS_SECTION_RANK,
      widget: new JobsSection({ model, commands, registry }),
      refresh: () =>
        Promise.all([
          model.refresh(),
          ...registry.groups.map(group => group.refresh())
        ]).then(() => undefined)
    });
    return model;
  }
};
