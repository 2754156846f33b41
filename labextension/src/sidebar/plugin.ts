/**
 * The `jupyter-gpu-env:plugin` plugin: the empty "GPU Env" sidebar in the
 * left area, its open and refresh commands, and the `IGpuEnvSidebar` token
 * through which the feature plugins add their sections. Its settings
 * (schema/plugin.json) are read by the plugins they concern.
 */
import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IStateDB } from '@jupyterlab/statedb';
import { refreshIcon } from '@jupyterlab/ui-components';

import { gpuIcon } from '../components/icons';
import { GpuEnvPanel, PANEL_ID, REFRESH_COMMAND } from './panel';
import { IGpuEnvSidebar } from './tokens';

/** The plugin id; also the id of its settings (schema/plugin.json). */
export const SIDEBAR_PLUGIN_ID = 'jupyter-gpu-env:plugin';

/** The palette category of every GPU Env command. */
export const PALETTE_CATEGORY = 'GPU Env';

namespace CommandIDs {
  export const open = 'jupyter-gpu-env:open';
  export const refresh = REFRESH_COMMAND;
}

export const sidebarPlugin: JupyterFrontEndPlugin<IGpuEnvSidebar> = {
  id: SIDEBAR_PLUGIN_ID,
  description:
    'A sidebar for shared GPU platforms: GPU and memory use, environments and jobs.',
  autoStart: true,
  provides: IGpuEnvSidebar,
  optional: [ILayoutRestorer, ICommandPalette, IStateDB],
  activate: (
    app: JupyterFrontEnd,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null,
    state: IStateDB | null
  ): IGpuEnvSidebar => {
    const { commands, shell } = app;
    const panel = new GpuEnvPanel({ commands, state });
    const activate = (): void => shell.activateById(PANEL_ID);

    commands.addCommand(CommandIDs.open, {
      label: 'Open GPU Env panel',
      caption: 'Show the GPU Env sidebar',
      icon: args => (args['isPalette'] ? undefined : gpuIcon),
      execute: activate
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

    shell.add(panel, 'left', { rank: 850, type: 'GPU Env' });
    restorer?.add(panel, PANEL_ID);

    return {
      id: PANEL_ID,
      addSection: section => panel.addSection(section),
      activate,
      reveal: id => {
        activate();
        panel.reveal(id);
      },
      refresh: () => panel.refresh()
    };
  }
};
