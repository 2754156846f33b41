/**
 * The `jupyter-gpu-env:jobs` plugin: the "Send to batch" notebook toolbar
 * button and palette command, the job log and output commands, the job-end
 * notifications, and the jobs model the sidebar's Jobs section shows.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  ICommandPalette,
  IToolbarWidgetRegistry,
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
import type { IJob } from '../api/types';
import { sendToBatchIcon } from '../components/icons';
import { PANEL_ID } from '../panel';
import { JobCommandIDs } from './actions';
import { JobsClient } from './client';
import { createLogWidget, JobLogView } from './log';
import { JobsModel } from './model';
import { notifyJobEnd } from './notify';
import { ILastUsed } from './resource-fields';
import { submitNotebook } from './submit';
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
    const openJobs = (job: IJob | null): void => {
      shell.activateById(PANEL_ID);
      model.reveal(job?.id ?? null);
    };
    const submit = (panel: NotebookPanel): Promise<IJob | null> =>
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
        openJobs
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

    if (palette) {
      palette.addItem({ command: JobCommandIDs.submit, category: 'GPU Env' });
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
