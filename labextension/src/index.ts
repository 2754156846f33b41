/**
 * jupyter-gpu-env: the plugin that wires the "GPU Env" sidebar into JupyterLab.
 */
import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IFileBrowserFactory } from '@jupyterlab/filebrowser';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStateDB } from '@jupyterlab/statedb';
import { refreshIcon } from '@jupyterlab/ui-components';

import { gpuIcon } from './components/icons';
import { registerEnvironmentCommands } from './environments/commands';
import { registerImageCommands } from './images/commands';
import { DEFAULT_REFRESH_INTERVAL } from './gpu/monitor';
import { GpuEnvPanel, PANEL_ID, REFRESH_COMMAND } from './panel';
import { jobsPlugin } from './jobs/plugin';
import { IJobsModel } from './jobs/tokens';
import { JobsModel } from './jobs/model';

/** The plugin id; also the id of its settings (schema/plugin.json). */
const PLUGIN_ID = 'jupyter-gpu-env:plugin';

namespace CommandIDs {
  export const open = 'jupyter-gpu-env:open';
  export const refresh = REFRESH_COMMAND;
}

const PALETTE_CATEGORY = 'GPU Env';

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description:
    'A sidebar for shared GPU platforms: GPU and memory use, environments and jobs.',
  autoStart: true,
  optional: [
    ILayoutRestorer,
    ICommandPalette,
    ISettingRegistry,
    IJobsModel,
    IStateDB,
    IFileBrowserFactory
  ],
  activate: (
    app: JupyterFrontEnd,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null,
    settingRegistry: ISettingRegistry | null,
    jobs: JobsModel | null,
    state: IStateDB | null,
    files: IFileBrowserFactory | null
  ): void => {
    const { commands, shell } = app;
    const panel = new GpuEnvPanel({
      serverSettings: app.serviceManager.serverSettings,
      commands,
      interval: DEFAULT_REFRESH_INTERVAL,
      kernelspecs: app.serviceManager.kernelspecs,
      sessions: app.serviceManager.sessions,
      jobs,
      state
    });

    commands.addCommand(CommandIDs.open, {
      label: 'Open GPU Env panel',
      caption: 'Show the GPU Env sidebar',
      icon: args => (args['isPalette'] ? undefined : gpuIcon),
      execute: () => shell.activateById(PANEL_ID)
    });
    commands.addCommand(CommandIDs.refresh, {
      label: 'Refresh GPU Env',
      caption: 'Refresh GPU and memory use, environments and images now',
      icon: args => (args['isPalette'] ? undefined : refreshIcon),
      execute: () => panel.refresh()
    });
    for (const command of [CommandIDs.open, CommandIDs.refresh]) {
      palette?.addItem({ command, category: PALETTE_CATEGORY });
    }
    registerEnvironmentCommands({
      commands,
      actions: panel.environments,
      gpu: panel.gpu,
      palette,
      category: PALETTE_CATEGORY,
      files,
      reveal: () => {
        shell.activateById(PANEL_ID);
        panel.reveal('environments');
      }
    });
    registerImageCommands({
      commands,
      model: panel.environments.model,
      kernelspecs: app.serviceManager.kernelspecs,
      palette,
      category: PALETTE_CATEGORY
    });

    shell.add(panel, 'left', { rank: 850, type: 'GPU Env' });
    if (restorer) {
      restorer.add(panel, PANEL_ID);
    }

    if (settingRegistry) {
      const apply = (settings: ISettingRegistry.ISettings): void => {
        const interval = settings.get('refreshInterval').composite;
        try {
          panel.monitor.interval =
            typeof interval === 'number' ? interval : DEFAULT_REFRESH_INTERVAL;
        } catch (reason) {
          console.error('jupyter-gpu-env: bad refreshInterval.', reason);
        }
      };
      settingRegistry
        .load(PLUGIN_ID)
        .then(settings => {
          apply(settings);
          settings.changed.connect(apply);
        })
        .catch(reason => {
          console.error('jupyter-gpu-env: cannot load settings.', reason);
        });
    }
  }
};

export default [plugin, jobsPlugin];
