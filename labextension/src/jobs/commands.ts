/**
 * The Jobs feature's commands: "Send notebook to batch…" (palette and the
 * notebook toolbar), a job's log and output, and the sweep commands
 * (results, retry, cancel), called by the rows' buttons and menus, the
 * notifications and the palette. A job's log and a sweep's results are
 * reopened after a reload, unless the job or sweep was deleted meanwhile.
 */
import { ILayoutRestorer, JupyterFrontEnd } from '@jupyterlab/application';
import {
  ICommandPalette,
  MainAreaWidget,
  Notification
} from '@jupyterlab/apputils';
import { DocumentWidget } from '@jupyterlab/docregistry';
import { NotebookPanel } from '@jupyterlab/notebook';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { messageOf } from '../api/request';
import type { IJob, ISweep } from '../api/types';
import { sendToBatchIcon } from '../components/icons';
import { restorableViews, unlessGone } from '../components/main-area';
import { JobsClient } from './client';
import { JobCommandIDs } from './command-ids';
import { isActiveState } from './format';
import { createLogWidget, JobLogView } from './run/log';
import { JobsModel } from './model';
import { chooseJob, chooseSweep } from './palette/pick';
import { createResultsWidget, SweepResultsView } from './sweeps/results';
import type { Submitted } from './submit/dialog';

export namespace JobCommands {
  export interface IOptions {
    model: JobsModel;
    client: JobsClient;
    /** What the cancel and sweep commands do once they found the job. */
    actions: {
      cancel(job: IJob): Promise<void>;
      retrySweep(sweep: ISweep): Promise<void>;
      cancelSweep(sweep: ISweep): Promise<void>;
    };
    /** Show the Jobs section, with `job` highlighted. */
    openJobs(job: Submitted | null): void;
    /** Send `panel`'s notebook to batch (the dialog). */
    submit(panel: NotebookPanel): Promise<Submitted | null>;
    /** Ask how to run the job `id` again (the dialog) and send it. */
    runAgain(id: string): Promise<IJob | null>;
    /** The notebook "Send to batch" applies to, if any. */
    current(): NotebookPanel | null;
    palette: ICommandPalette | null;
    restorer: ILayoutRestorer | null;
    category: string;
  }
}

export function registerJobCommands(
  app: JupyterFrontEnd,
  options: JobCommands.IOptions
): void {
  const { commands, shell } = app;
  const { model, client, current, submit } = options;
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

  const logs = new Map<string, MainAreaWidget<JobLogView>>();
  const logTracker = restorableViews<MainAreaWidget<JobLogView>>({
    restorer: options.restorer,
    namespace: 'gpu-env-job-log',
    command: JobCommandIDs.showLog,
    args: widget => ({ id: widget.content.jobId }),
    name: widget => widget.content.jobId
  });
  /** The job `{ id }`, or the one the user picks from the palette. */
  const jobOf = async (
    args: ReadonlyPartialJSONObject,
    ask: Parameters<typeof chooseJob>[1]
  ): Promise<IJob | null> => {
    const id =
      typeof args['id'] === 'string' ? args['id'] : await chooseJob(model, ask);
    return id ? findJob(model, client, id) : null;
  };
  const hasId = (args: ReadonlyPartialJSONObject): boolean =>
    typeof args['id'] === 'string';

  commands.addCommand(JobCommandIDs.showLog, {
    label: args => (hasId(args) ? 'Show job log' : "Show a job's log…"),
    caption: 'Follow the log of a batch job',
    execute: async args => {
      await unlessGone(args, () => client.getJob(String(args['id'])));
      const job = await jobOf(args, {
        title: 'Show the log of which job?',
        filter: 'any',
        okLabel: 'Show log'
      });
      if (!job) {
        return;
      }
      let widget = logs.get(job.id);
      if (!widget || widget.isDisposed) {
        widget = createLogWidget(client, job);
        logs.set(job.id, widget);
        widget.disposed.connect(() => logs.delete(job.id));
        // Beside the notebook it is asked from; else a tab of its own, so
        // that the Jobs view or a sweep's results keep their width.
        const beside = shell.currentWidget instanceof DocumentWidget;
        shell.add(widget, 'main', beside ? { mode: 'split-right' } : {});
        await logTracker.add(widget);
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

  commands.addCommand(JobCommandIDs.cancel, {
    label: args => (hasId(args) ? 'Cancel job…' : 'Cancel a job…'),
    caption: 'Stop a queued or running batch job (asked first)',
    isEnabled: args => !model.isBusy(hasId(args) ? String(args['id']) : ''),
    execute: async args => {
      const job = await jobOf(args, {
        title: 'Cancel which job?',
        filter: 'active',
        okLabel: 'Choose'
      });
      if (job) {
        await options.actions.cancel(job);
      }
    }
  });

  const views = registerSweepCommands(app, options);

  commands.addCommand(JobCommandIDs.runAgain, {
    // "rerun", the command line's word, finds it in the palette too.
    label: args => (hasId(args) ? 'Run again…' : 'Run a job again (rerun)…'),
    caption:
      'Send this run again from its snapshot, its values and resources ' +
      'filled in to change before sending',
    execute: async args => {
      const id = hasId(args)
        ? String(args['id'])
        : await chooseJob(model, {
            title: 'Run which job again?',
            filter: 'ended',
            okLabel: 'Choose'
          });
      if (!id) {
        return null;
      }
      const job = await options.runAgain(id);
      if (!job) {
        return null;
      }
      model.add(job);
      if (job.group_id) {
        // A sweep's run sent again is a new run of it: its results show it.
        void views
          .get(job.group_id)
          ?.content.model.refresh()
          .catch(() => undefined);
      }
      const where = job.group_id ? ' as a new run of its sweep' : '';
      Notification.success(`Sent '${job.name}' again${where}.`, {
        autoClose: 6000,
        actions: [
          {
            label: 'Open jobs',
            caption: 'Show the job in the GPU Env sidebar',
            callback: () => options.openJobs(job)
          }
        ]
      });
      return job.id;
    }
  });

  for (const command of [
    JobCommandIDs.submit,
    JobCommandIDs.cancel,
    JobCommandIDs.runAgain,
    JobCommandIDs.showLog,
    JobCommandIDs.sweepResults
  ]) {
    options.palette?.addItem({ command, category: options.category });
  }
}

/**
 * The sweep commands, called with `{ sweep: id }`: its results in the main
 * area (in the palette too, asking which sweep), retry its failed runs,
 * cancel its active ones.
 */
function registerSweepCommands(
  app: JupyterFrontEnd,
  options: JobCommands.IOptions
): Map<string, MainAreaWidget<SweepResultsView>> {
  const { commands, shell } = app;
  const { model, client, actions } = options;
  const sweepId = (args: ReadonlyPartialJSONObject): string | null =>
    typeof args['sweep'] === 'string' ? args['sweep'] : null;
  const known = (args: ReadonlyPartialJSONObject): ISweep | null => {
    const id = sweepId(args);
    return id ? model.sweep(id) : null;
  };
  const findSweep = async (id: string): Promise<ISweep | null> => {
    try {
      return model.sweep(id) ?? (await client.getSweep(id));
    } catch (error) {
      Notification.error(`Cannot find sweep ${id}: ${messageOf(error)}`);
      return null;
    }
  };

  const views = new Map<string, MainAreaWidget<SweepResultsView>>();
  const tracker = restorableViews<MainAreaWidget<SweepResultsView>>({
    restorer: options.restorer,
    namespace: 'gpu-env-sweep-results',
    command: JobCommandIDs.sweepResults,
    args: widget => ({ sweep: widget.content.model.id }),
    name: widget => widget.content.model.id
  });
  commands.addCommand(JobCommandIDs.sweepResults, {
    label: args => (sweepId(args) ? 'Open results' : "Open a sweep's results…"),
    caption: "A sweep's runs side by side: parameters and recorded values",
    execute: async args => {
      const id =
        sweepId(args) ??
        (await chooseSweep(model, {
          title: 'Open the results of which sweep?',
          okLabel: 'Open'
        }));
      if (!id) {
        return;
      }
      await unlessGone(args, () => client.getSweep(id));
      let widget = views.get(id);
      if (!widget || widget.isDisposed) {
        widget = createResultsWidget({
          client,
          id,
          runAgain: row =>
            commands.execute(JobCommandIDs.runAgain, { id: row.job_id })
        });
        views.set(id, widget);
        widget.disposed.connect(() => views.delete(id));
        shell.add(widget, 'main');
        await tracker.add(widget);
      }
      shell.activateById(widget.id);
    }
  });

  /**
   * A command on the sweep `{ sweep: id }`: shown when `applies` to the sweep
   * as listed (or when it is not listed), off while it is busy.
   */
  const addSweepCommand = (
    id: string,
    label: string,
    caption: string,
    applies: (sweep: ISweep) => boolean,
    action: (sweep: ISweep) => Promise<void>
  ): void => {
    commands.addCommand(id, {
      label,
      caption,
      isVisible: args => {
        const sweep = known(args);
        return !sweep || applies(sweep);
      },
      isEnabled: args => !model.isBusy(sweepId(args) ?? ''),
      execute: async args => {
        const id = sweepId(args);
        const sweep = id ? await findSweep(id) : null;
        if (sweep) {
          await action(sweep);
        }
      }
    });
  };
  addSweepCommand(
    JobCommandIDs.retrySweep,
    'Retry failed and cancelled runs',
    'Run the failed and cancelled runs of the sweep again',
    sweep => (sweep.counts.failed ?? 0) + (sweep.counts.cancelled ?? 0) > 0,
    async sweep => {
      await actions.retrySweep(sweep);
      // The results follow the retry: its runs show as queued at once.
      await views
        .get(sweep.id)
        ?.content.model.refresh()
        .catch(() => undefined);
    }
  );
  addSweepCommand(
    JobCommandIDs.cancelSweep,
    'Cancel sweep…',
    'Cancel the runs still queued or running',
    sweep => isActiveState(sweep.state),
    sweep => actions.cancelSweep(sweep)
  );
  return views;
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
