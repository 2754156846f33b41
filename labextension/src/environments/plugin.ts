/**
 * The `jupyter-gpu-env:environments` plugin: the sidebar's "Environments"
 * section and the environment commands (its rows' menus, the palette, the
 * file browser's "Create environment from this file").
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IFileBrowserFactory } from '@jupyterlab/filebrowser';

import { GpuClient } from '../gpu/client';
import { PALETTE_CATEGORY } from '../sidebar/plugin';
import { IGpuEnvSidebar } from '../sidebar/tokens';
import { TaskTracker } from '../tasks/tracker';
import { ITaskTracker } from '../tasks/tokens';
import { EnvironmentActions } from './actions';
import { registerEnvironmentCommands } from './commands';
import { EnvironmentsModel } from './model';
import { ENVIRONMENT_TASKS, EnvironmentsSection } from './section';

/** Where the section stands among the sidebar's: after GPU & memory. */
export const ENVIRONMENTS_SECTION_RANK = 200;
const SECTION_ID = 'environments';

export const environmentsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-gpu-env:environments',
  description:
    'The Environments section of the GPU Env sidebar and its commands.',
  autoStart: true,
  requires: [IGpuEnvSidebar, ITaskTracker],
  optional: [ICommandPalette, IFileBrowserFactory],
  activate: (
    app: JupyterFrontEnd,
    sidebar: IGpuEnvSidebar,
    tracker: TaskTracker,
    palette: ICommandPalette | null,
    files: IFileBrowserFactory | null
  ): void => {
    const { commands, serviceManager } = app;
    // Asked when shown and every 30 s while the section is visible.
    const model: EnvironmentsModel = new EnvironmentsModel({
      serverSettings: serviceManager.serverSettings,
      visible: (): boolean => section.isVisible
    });
    tracker.follow(ENVIRONMENT_TASKS);
    const actions: EnvironmentActions = new EnvironmentActions({
      model,
      tracker,
      kernelspecs: serviceManager.kernelspecs,
      sessions: serviceManager.sessions
    });
    const section: EnvironmentsSection = new EnvironmentsSection(
      actions,
      commands
    );
    sidebar.addSection({
      id: SECTION_ID,
      title: 'Environments',
      rank: ENVIRONMENTS_SECTION_RANK,
      widget: section,
      refresh: () => model.refresh()
    });
    // Pick up tasks started before this page was loaded.
    tracker.attach().catch(reason => {
      console.warn('jupyter-gpu-env: cannot list running tasks.', reason);
    });

    registerEnvironmentCommands({
      commands,
      actions,
      gpu: new GpuClient(serviceManager.serverSettings),
      palette,
      category: PALETTE_CATEGORY,
      files,
      reveal: () => sidebar.reveal(SECTION_ID)
    });
  }
};
