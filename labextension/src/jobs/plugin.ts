/**
 * The `jupyter-gpu-env:jobs` plugin: the "Send to batch" notebook toolbar
 * button and palette command, the job log and output commands, the sweep
 * commands (results, retry, cancel), the job-end notifications, and the
 * jobs model the sidebar's Jobs section shows.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  ICommandPalette,
  IToolbarWidgetRegistry,
  InputDialog,
  MainAreaWidget,
  Notification
} from '@jupyterlab/apputils';
import { DocumentWidget } from '@jupyterlab/docregistry';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStateDB } from '@jupyterlab/statedb';
import { ToolbarButton } from '@jupyterlab/ui-components';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { messageOf } from '../api/request';
import type { IJob, IJobGroup } from '../api/types';
import { sendToBatchIcon } from '../components/icons';
import { PANEL_ID } from '../panel';
import { JobActions, JobCommandIDs } from './actions';
import { JobsClient } from './client';
import { isActiveState } from './format';
import { createLogWidget, JobLogView } from './log';
import { JobsModel } from './model';
import { notifyGpuIdle, notifyJobEnd, notifySweepEnd } from './notify';
import { ILastUsed } from './resource-fields';
import { createResultsWidget, SweepResultsView } from './results';
import { Submitted, submitNotebook } from './submit';
import { IJobsModel } from './tokens';

const PLUGIN_ID = 'jupyter-gpu-env:jobs';
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
    IStateDB
  ],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker | null,
    palette: ICommandPalette | null,
    settingRegistry: ISettingRegistry | null,
    toolbarRegistry: IToolbarWidgetRegistry | null,
    state: IStateDB | null
  ): JobsModel => {
    const { commands, shell, serviceManager } = app;
    const client = new JobsClient(serviceManager.serverSettings);
    const model = new JobsModel({ client });
    let settings: ISettingRegistry.ISettings | null = null;

    const setting = <T>(key: string, fallback: T): T =>
      (settings?.get(key).composite as T | undefined) ?? fallback;
    const openJobs = (job: Submitted | null): void => {
      shell.activateById(PANEL_ID);
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
        openResults: group =>
          void commands.execute(JobCommandIDs.sweepResults, {
            group: group.id
          })
      });
    const current = (): NotebookPanel | null => {
      const widget = tracker?.currentWidget ?? null;
      return widget && widget === shell.currentWidget ? widget : null;
    };

    commands.addCommand(JobCommandIDs.submit, {
      label: 'Send notebook to batch…',
      caption: 'Save this notebook and run it in the background on a backend',
      icon: args => (args['isPalette'] ? undefined : sendToBatchIcon),
      isEnabled: () => current() !== null,
      execute: () => {
        const panel = current();
        return panel ? submit(panel) : null;
      }
    });
    const refreshEnabled = (): void =>
      commands.notifyCommandChanged(JobCommandIDs.submit);
    tracker?.currentChanged.connect(refreshEnabled);
    shell.currentChanged?.connect(refreshEnabled);

    const logs = new Map<string, MainAreaWidget<JobLogView>>();
    commands.addCommand(JobCommandIDs.showLog, {
      label: 'Show job log',
      caption: 'Follow the log of a batch job',
      execute: async args => {
        const job = await findJob(model, client, args['id']);
        if (!job) {
          return;
        }
        let widget = logs.get(job.id);
        if (!widget || widget.isDisposed) {
          widget = createLogWidget(client, job);
          logs.set(job.id, widget);
          widget.disposed.connect(() => logs.delete(job.id));
          shell.add(widget, 'main', { mode: 'split-right' });
        }
        shell.activateById(widget.id);
      }
    });

    commands.addCommand(JobCommandIDs.openOutput, {
      label: 'Open job output',
      caption: 'Open the notebook a batch job wrote',
      execute: async args => {
        const job = await findJob(model, client, args['id']);
        if (job) {
          await openOutput(app, job);
        }
      }
    });

    registerSweepCommands(app, model, client, openJobs);

    if (palette) {
      palette.addItem({ command: JobCommandIDs.submit, category: 'GPU Env' });
      palette.addItem({
        command: JobCommandIDs.sweepResults,
        category: 'GPU Env'
      });
    }
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
    model.groupEnded.connect((_, group) => {
      if (setting('notifyOnEnd', true)) {
        notifySweepEnd(group, model, commands);
      }
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
    return model;
  }
};

/**
 * The sweep commands, called with `{ group: id }`: its results in the main
 * area (in the palette too, asking which sweep), retry its failed runs,
 * cancel its active ones.
 */
function registerSweepCommands(
  app: JupyterFrontEnd,
  model: JobsModel,
  client: JobsClient,
  openJobs: (job: Submitted | null) => void
): void {
  const { commands, shell } = app;
  const actions = new JobActions(model, commands);
  const groupId = (args: ReadonlyPartialJSONObject): string | null =>
    typeof args['group'] === 'string' ? args['group'] : null;
  const known = (args: ReadonlyPartialJSONObject): IJobGroup | null => {
    const id = groupId(args);
    return id ? model.group(id) : null;
  };
  const findGroup = async (id: string): Promise<IJobGroup | null> => {
    try {
      return model.group(id) ?? (await client.getGroup(id));
    } catch (error) {
      Notification.error(`Cannot find sweep ${id}: ${messageOf(error)}`);
      return null;
    }
  };

  const views = new Map<string, MainAreaWidget<SweepResultsView>>();
  commands.addCommand(JobCommandIDs.sweepResults, {
    label: args => (groupId(args) ? 'Open results' : 'Open sweep results…'),
    caption: "A sweep's runs side by side: parameters and recorded values",
    execute: async args => {
      const id = groupId(args) ?? (await chooseGroup(model));
      if (!id) {
        return;
      }
      let widget = views.get(id);
      if (!widget || widget.isDisposed) {
        widget = createResultsWidget({
          client,
          id,
          onRerun: job => {
            model.add(job);
            Notification.success(`Sent '${job.name}' to ${job.backend}.`, {
              autoClose: 6000,
              actions: [
                {
                  label: 'Open jobs',
                  caption: 'Show the job in the GPU Env sidebar',
                  callback: () => openJobs(job)
                }
              ]
            });
          }
        });
        views.set(id, widget);
        widget.disposed.connect(() => views.delete(id));
        shell.add(widget, 'main');
      }
      shell.activateById(widget.id);
    }
  });

  commands.addCommand(JobCommandIDs.retrySweep, {
    label: 'Retry failed runs',
    caption: 'Run the failed and cancelled runs of the sweep again',
    isVisible: args => {
      const group = known(args);
      return (
        !group || (group.counts.failed ?? 0) + (group.counts.cancelled ?? 0) > 0
      );
    },
    isEnabled: args => !model.isBusy(groupId(args) ?? ''),
    execute: async args => {
      const id = groupId(args);
      const group = id ? await findGroup(id) : null;
      if (group) {
        await actions.retryGroup(group);
      }
    }
  });

  commands.addCommand(JobCommandIDs.cancelSweep, {
    label: 'Cancel sweep…',
    caption: 'Cancel the runs still queued or running',
    isVisible: args => {
      const group = known(args);
      return !group || isActiveState(group.state);
    },
    isEnabled: args => !model.isBusy(groupId(args) ?? ''),
    execute: async args => {
      const id = groupId(args);
      const group = id ? await findGroup(id) : null;
      if (group) {
        await actions.cancelGroup(group);
      }
    }
  });
}

/** Ask which sweep (those listed, or an id typed); null if cancelled. */
async function chooseGroup(model: JobsModel): Promise<string | null> {
  if (model.jobs === null) {
    await model.load();
  }
  const groups = (model.entries ?? []).flatMap(entry =>
    entry.kind === 'group'
      ? [entry.group ?? { id: entry.id, name: entry.id }]
      : []
  );
  const labels = groups.map(g => `${g.name} (${g.id})`);
  const answer = await InputDialog.getItem({
    title: 'Open the results of which sweep?',
    label: 'A sweep listed in the Jobs section, or its id',
    items: labels,
    editable: true,
    okLabel: 'Open'
  });
  if (!answer.button.accept || !answer.value) {
    return null;
  }
  const chosen = labels.indexOf(answer.value);
  return chosen >= 0 ? groups[chosen].id : answer.value.trim() || null;
}

/** The job `id` names: from the list, else asked; a notification if gone. */
async function findJob(
  model: JobsModel,
  client: JobsClient,
  id: unknown
): Promise<IJob | null> {
  if (typeof id !== 'string') {
    return null;
  }
  try {
    return model.find(id) ?? (await client.getJob(id));
  } catch (error) {
    Notification.error(`Cannot find job ${id}: ${messageOf(error)}`);
    return null;
  }
}

/** Open the job's output notebook, reloaded when it was already open. */
async function openOutput(app: JupyterFrontEnd, job: IJob): Promise<void> {
  const path = job.output_path;
  if (path.startsWith('/')) {
    Notification.warning(
      `The output is outside the server's root, so JupyterLab cannot open ` +
        `it: ${path}`
    );
    return;
  }
  try {
    await app.serviceManager.contents.get(path, { content: false });
  } catch {
    Notification.warning(
      job.started_at === null
        ? `'${job.name}' has not started: there is no output yet.`
        : `The output of '${job.name}' is not there (${path}).`
    );
    return;
  }
  const widget = await app.commands.execute('docmanager:open', { path });
  if (
    widget instanceof DocumentWidget &&
    !widget.context.model.dirty &&
    widget.context.isReady
  ) {
    // Written cell by cell while the job runs: show what is there now.
    await widget.context.revert();
  }
}
