/**
 * The `jupyter-gpu-env:pipelines` plugin: the pipeline commands (a
 * pipeline's graph, "Run Pipeline" on `*.pipeline.yaml` files in the file
 * browser, cancel) over the jobs model, which lists the pipelines.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IFileBrowserFactory } from '@jupyterlab/filebrowser';

import { PALETTE_CATEGORY } from '../../sidebar/plugin';
import { IJobsModel } from '../tokens';
import { registerPipelineCommands } from './commands';
import { JobsModel } from '../model';

export const pipelinesPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-gpu-env:pipelines',
  description:
    'Notebook pipelines: run a *.pipeline.yaml, follow and act on its graph.',
  autoStart: true,
  requires: [IJobsModel],
  optional: [ICommandPalette, IFileBrowserFactory],
  activate: (
    app: JupyterFrontEnd,
    model: JobsModel,
    palette: ICommandPalette | null,
    files: IFileBrowserFactory | null
  ): void => {
    registerPipelineCommands(app, {
      model,
      files,
      palette,
      category: PALETTE_CATEGORY
    });
  }
};
