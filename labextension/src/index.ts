/**
 * jupyter-gpu-env: the plugin that wires the "GPU Env" sidebar into JupyterLab.
 */
import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStateDB } from '@jupyterlab/statedb';
import { refreshIcon } from '@jupyterlab/ui-components';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { gpuIcon } from './components/icons';
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
  export const clone = 'jupyter-gpu-env:clone-environment';
  export const pack = 'jupyter-gpu-env:pack-environment';
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
    IStateDB
  ],
  activate: (
    app: JupyterFrontEnd,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null,
    settingRegistry: ISettingRegistry | null,
    jobs: JobsModel | null,
    state: IStateDB | null
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
    commands.addCommand(CommandIDs.clone, {
      label: 'Clone environment…',
      caption: 'Clone a conda environment into your own environments',
      execute: args => panel.environments.clone(text(args, 'source'))
    });
    commands.addCommand(CommandIDs.pack, {
      label: 'Pack environment into an image…',
      caption: 'Pack a conda environment into one squashfs image',
      execute: args => panel.environments.pack(text(args, 'environment'))
    });
    if (palette) {
      const items = [
        CommandIDs.open,
        CommandIDs.refresh,
        CommandIDs.clone,
        CommandIDs.pack
      ];
      for (const command of items) {
        palette.addItem({ command, category: PALETTE_CATEGORY });
      }
    }

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

/** A command's string argument, if given. */
function text(
  args: ReadonlyPartialJSONObject,
  key: string
): string | undefined {
  const value = args[key];
  return typeof value === 'string' ? value : undefined;
}

export default [plugin, jobsPlugin];
