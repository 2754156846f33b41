/**
 * The `jupyter-gpu-env:gpu` plugin: the sidebar's "GPU & memory" section,
 * polled every `refreshInterval` (the sidebar's setting) while it shows.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ISettingRegistry } from '@jupyterlab/settingregistry';

import { SIDEBAR_PLUGIN_ID } from '../sidebar/plugin';
import { IGpuEnvSidebar } from '../sidebar/tokens';
import { GpuClient } from './client';
import { DEFAULT_REFRESH_INTERVAL, GpuMonitor } from './monitor';
import { MemorySection } from './section';

/** Where the section stands among the sidebar's: first. */
export const MEMORY_SECTION_RANK = 100;

export const gpuPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-gpu-env:gpu',
  description: 'The GPU & memory section of the GPU Env sidebar.',
  autoStart: true,
  requires: [IGpuEnvSidebar],
  optional: [ISettingRegistry],
  activate: (
    app: JupyterFrontEnd,
    sidebar: IGpuEnvSidebar,
    settingRegistry: ISettingRegistry | null
  ): void => {
    // Ask nothing while the browser tab is hidden, the sidebar shows
    // another panel, or the section is collapsed.
    const monitor: GpuMonitor = new GpuMonitor({
      client: new GpuClient(app.serviceManager.serverSettings),
      interval: DEFAULT_REFRESH_INTERVAL,
      visible: (): boolean => section.isVisible
    });
    const section: MemorySection = new MemorySection(monitor, {
      commands: app.commands
    });
    sidebar.addSection({
      id: 'memory',
      title: 'GPU & memory',
      rank: MEMORY_SECTION_RANK,
      widget: section,
      refresh: () => monitor.refresh()
    });

    const apply = (settings: ISettingRegistry.ISettings): void => {
      const interval = settings.get('refreshInterval').composite;
      try {
        monitor.interval =
          typeof interval === 'number' ? interval : DEFAULT_REFRESH_INTERVAL;
      } catch (reason) {
        console.error('jupyter-gpu-env: bad refreshInterval.', reason);
      }
    };
    settingRegistry
      ?.load(SIDEBAR_PLUGIN_ID)
      .then(settings => {
        apply(settings);
        settings.changed.connect(apply);
      })
      .catch(reason => {
        console.error('jupyter-gpu-env: cannot load settings.', reason);
      });
  }
};
