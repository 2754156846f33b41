/**
 * The `jupyter-gpu-env:tasks` plugin: one tracker of the server's long
 * operations for every feature (which says which kinds it follows).
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';

import { ITaskTracker } from './tokens';
import { TaskTracker } from './tracker';

export const tasksPlugin: JupyterFrontEndPlugin<TaskTracker> = {
  id: 'jupyter-gpu-env:tasks',
  description: "Follows the server's long operations until they end.",
  autoStart: true,
  provides: ITaskTracker,
  activate: (app: JupyterFrontEnd): TaskTracker =>
    new TaskTracker({
      serverSettings: app.serviceManager.serverSettings,
      kinds: []
    })
};
