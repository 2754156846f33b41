/**
 * The `jupyter-gpu-env:pipelines` plugin: follows the pipelines and hands
 * them, with their rows, to the jobs (`IJobsRegistry`: one entry each in the
 * Jobs section and the Jobs view); offers "Run after…" in the send dialog;
 * the pipeline commands (a pipeline's graph, "Run Pipeline" on
 * `*.pipeline.yaml` files in the file browser, cancel); graphs reopened
 * after a reload.
 */
import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IFileBrowserFactory } from '@jupyterlab/filebrowser';

import { JobsModel } from '../jobs/model';
import { IJobsModel, IJobsRegistry } from '../jobs/tokens';
import { PALETTE_CATEGORY } from '../sidebar/plugin';
import { RunAfterPart } from './after-field';
import { PipelineRows } from './cells';
import { PipelineCommandIDs } from './command-ids';
import { registerPipelineCommands } from './commands';
import { FollowedPipelines } from './followed';
import { PipelineRow } from './row';

export const pipelinesPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-gpu-env:pipelines',
  description:
    'Notebook pipelines: run a *.pipeline.yaml, follow and act on its graph.',
  autoStart: true,
  requires: [IJobsModel, IJobsRegistry],
  optional: [ICommandPalette, IFileBrowserFactory, ILayoutRestorer],
  activate: (
    app: JupyterFrontEnd,
    model: JobsModel,
    registry: IJobsRegistry,
    palette: ICommandPalette | null,
    files: IFileBrowserFactory | null,
    restorer: ILayoutRestorer | null
  ): void => {
    const followed = new FollowedPipelines(app.serviceManager.serverSettings);
    registry.addPipelines(followed, { row: PipelineRow, cells: PipelineRows });
    registry.addSendPart(
      context =>
        new RunAfterPart(context.jobs, {
          client: followed.client,
          listed: pipeline => model.addPipeline(pipeline),
          open: pipeline =>
            void app.commands.execute(PipelineCommandIDs.open, {
              id: pipeline.id
            })
        })
    );
    registerPipelineCommands(app, {
      model,
      followed,
      files,
      palette,
      restorer,
      category: PALETTE_CATEGORY
    });
  }
};
