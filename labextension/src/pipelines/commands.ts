/**
 * The pipeline commands: "Open a pipeline…" (its graph in the main area,
 * one widget per pipeline, reopened after a reload unless the pipeline was
 * deleted), "Run Pipeline" on a `*.pipeline.yaml` in the file browser
 * ("Run a pipeline file…" in the palette), and "Cancel pipeline…" (asked
 * first), called by the Jobs section's rows and the graph's toolbar; in the
 * palette, "Cancel a pipeline…" asks which of the running ones.
 */
import { ILayoutRestorer, JupyterFrontEnd } from '@jupyterlab/application';
import {
  Dialog,
  ICommandPalette,
  MainAreaWidget,
  Notification,
  showDialog,
  showErrorMessage
} from '@jupyterlab/apputils';
import { IFileBrowserFactory } from '@jupyterlab/filebrowser';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { messageOf } from '../api/request';
import type { IPipeline, IPipelineNode } from '../api/types';
import { pickOne } from '../components/dialogs/pick';
import { restorableViews, unlessGone } from '../components/main-area';
import { JobCommandIDs } from '../jobs/command-ids';
import { formatTime } from '../jobs/format';
import { JobsModel } from '../jobs/model';
import { PIPELINE_FILE, PipelineCommandIDs } from './command-ids';
import { isPipelineActive } from './format';
import {
  PipelineModel,
  PipelineView,
  createPipelineWidget
} from './graph/view';
import { PipelinesClient } from './client';
import { FollowedPipelines } from './followed';

export interface IPipelineCommandOptions {
  model: JobsModel;
  /** The pipelines the jobs model lists, followed here. */
  followed: FollowedPipelines;
  files: IFileBrowserFactory | null;
  palette: ICommandPalette | null;
  restorer: ILayoutRestorer | null;
  category: string;
}

export function registerPipelineCommands(
  app: JupyterFrontEnd,
  options: IPipelineCommandOptions
): void {
  const { commands, shell } = app;
  const { model, files, followed } = options;
  const { client } = followed;
  const views = new Map<string, MainAreaWidget<PipelineView>>();
  const tracker = restorableViews<MainAreaWidget<PipelineView>>({
    restorer: options.restorer,
    namespace: 'gpu-env-pipeline',
    command: PipelineCommandIDs.open,
    args: widget => ({ id: widget.content.model.id }),
    name: widget => widget.content.model.id
  });

  /** Open what a node ran: a job's log, a sweep's results. */
  const openNode = (node: IPipelineNode): void => {
    if (node.kind === 'sweep' && node.group_id) {
      void commands.execute(JobCommandIDs.sweepResults, {
        sweep: node.group_id
      });
    } else if (node.job_id) {
      void commands.execute(JobCommandIDs.showLog, { id: node.job_id });
    }
  };

  const cancel = async (pipeline: IPipeline | null, id: string) => {
    const name = pipeline?.name ?? id;
    const result = await showDialog({
      title: 'Cancel pipeline?',
      body:
        `Stop the running nodes of '${name}' and skip the ones that have ` +
        'not run. What has ended stays.',
      buttons: [
        Dialog.cancelButton({ label: 'Keep running' }),
        Dialog.warnButton({ label: 'Cancel pipeline' })
      ]
    });
    return result.button.accept;
  };

  /** Cancel through the view's model (its error shown there) or directly. */
  const cancelFrom = async (view: PipelineModel): Promise<void> => {
    if (!(await cancel(view.pipeline, view.id))) {
      return;
    }
    const done = await view.cancel();
    if (done) {
      followed.set(done);
      void model.refresh().catch(() => undefined);
    }
  };

  const openGraph = async (id: string, pipeline?: IPipeline) => {
    let widget = views.get(id);
    if (!widget || widget.isDisposed) {
      widget = createPipelineWidget({
        client,
        id,
        pipeline,
        onOpen: openNode,
        cancel: cancelFrom
      });
      views.set(id, widget);
      widget.disposed.connect(() => views.delete(id));
      shell.add(widget, 'main');
      await tracker.add(widget);
    } else if (pipeline) {
      widget.content.model.set(pipeline);
    }
    shell.activateById(widget.id);
    return widget;
  };

  commands.addCommand(PipelineCommandIDs.open, {
    label: args =>
      typeof args['id'] === 'string' ? 'Open graph' : 'Open a pipeline…',
    caption: "A pipeline's graph: its nodes, how they stand, re-run from one",
    execute: async args => {
      const id =
        typeof args['id'] === 'string'
          ? args['id']
          : await choosePipeline(client, {
              title: 'Open which pipeline?',
              okLabel: 'Open'
            });
      if (id) {
        await unlessGone(args, () => client.get(id));
        await openGraph(id, followed.get(id) ?? undefined);
      }
    }
  });

  /** The file the command applies to: `{ path }`, else the one selected. */
  const fileOf = (args: ReadonlyPartialJSONObject): string | null => {
    if (typeof args['path'] === 'string') {
      return args['path'];
    }
    const browser = files?.tracker.currentWidget;
    const selected = browser ? Array.from(browser.selectedItems()) : [];
    return selected.length === 1 && selected[0].type !== 'directory'
      ? selected[0].path
      : null;
  };
  const isPipelineFile = (args: ReadonlyPartialJSONObject): boolean =>
    PIPELINE_FILE.test(fileOf(args) ?? '');

  commands.addCommand(PipelineCommandIDs.runFile, {
    label: args =>
      args['isPalette'] ? 'Run a pipeline file…' : 'Run Pipeline',
    caption:
      'Run the notebooks of this *.pipeline.yaml as a pipeline and open its graph',
    isVisible: isPipelineFile,
    isEnabled: isPipelineFile,
    execute: async args => {
      const path = fileOf(args);
      if (!path) {
        return null;
      }
      try {
        const pipeline = await client.submitFile(path);
        model.addPipeline(pipeline);
        await openGraph(pipeline.id, pipeline);
        return pipeline.id;
      } catch (error) {
        await showErrorMessage(`Cannot run ${path}`, messageOf(error));
        return null;
      }
    }
  });
  app.contextMenu.addItem({
    command: PipelineCommandIDs.runFile,
    selector: '.jp-DirListing-item[data-isdir="false"]',
    rank: 3
  });

  commands.addCommand(PipelineCommandIDs.cancel, {
    label: args =>
      typeof args['id'] === 'string'
        ? 'Cancel pipeline…'
        : 'Cancel a pipeline…',
    caption: 'Stop its running nodes and skip the rest (asked first)',
    execute: async args => {
      const id =
        typeof args['id'] === 'string'
          ? args['id']
          : await choosePipeline(client, {
              title: 'Cancel which pipeline?',
              okLabel: 'Choose',
              active: true
            });
      if (!id) {
        return;
      }
      const view = views.get(id);
      if (view && !view.isDisposed) {
        await cancelFrom(view.content.model);
        return;
      }
      if (!(await cancel(followed.get(id), id))) {
        return;
      }
      try {
        followed.set(await client.cancel(id));
      } catch (error) {
        await showErrorMessage('Cannot cancel the pipeline', messageOf(error));
      }
      void model.refresh().catch(() => undefined);
    }
  });

  for (const command of [
    PipelineCommandIDs.open,
    PipelineCommandIDs.runFile,
    PipelineCommandIDs.cancel
  ]) {
    options.palette?.addItem({ command, category: options.category });
  }
}

/**
 * Ask which pipeline (`active`: of those queued or running), newest first
 * (`GET pipelines`); its id, or null.
 */
async function choosePipeline(
  client: PipelinesClient,
  options: { title: string; okLabel: string; active?: boolean }
): Promise<string | null> {
  let pipelines: IPipeline[];
  try {
    pipelines = (await client.list({ limit: 100 })).items;
  } catch (error) {
    await showErrorMessage('Cannot list the pipelines', messageOf(error));
    return null;
  }
  if (options.active) {
    pipelines = pipelines.filter(p => isPipelineActive(p.state));
    if (pipelines.length === 0) {
      Notification.info(
        'No pipeline is queued or running: there is nothing to cancel.',
        { autoClose: 5000 }
      );
      return null;
    }
  }
  if (pipelines.length === 0) {
    await showErrorMessage(
      'No pipeline yet',
      'Run a *.pipeline.yaml from the file browser, or send a notebook ' +
        'to run after a job ("Run after…" in the send dialog).'
    );
    return null;
  }
  return pickOne({
    title: options.title,
    label: 'Pipeline',
    items: pipelines.map(p => ({
      id: p.id,
      label:
        `${p.name} — ${p.state}${isPipelineActive(p.state) ? '…' : ''}, ` +
        `${formatTime(p.created_at)}`
    })),
    okLabel: options.okLabel,
    testId: 'gpu-env-pick-pipeline'
  });
}
