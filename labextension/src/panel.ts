/**
 * The "GPU Env" sidebar: a header, a toolbar, and one collapsible section per
 * feature (GPU & memory, Environments, Jobs).
 */
import {
  CommandToolbarButton,
  SidePanel,
  refreshIcon
} from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import { Panel, Widget } from '@lumino/widgets';

import { GpuEnvClient } from './api';
import { CollapsibleSection } from './components/section';
import { gpuIcon } from './icons';
import { GpuMonitor } from './monitor';
import { MemorySection } from './sections/memory';
import {
  createEnvironmentsSection,
  createJobsSection
} from './sections/placeholder';

/** The sidebar's widget id (also its layout-restorer name). */
export const PANEL_ID = 'jupyter-gpu-env:sidebar';

/** The refresh command; its toolbar button lives in the panel. */
export const REFRESH_COMMAND = 'jupyter-gpu-env:refresh';

export class GpuEnvPanel extends SidePanel {
  constructor(options: GpuEnvPanel.IOptions) {
    // A plain scrolling column rather than an accordion: sections keep
    // their natural height and the empty states are never clipped.
    super({ content: new Panel() });
    this.id = PANEL_ID;
    this.addClass('jp-GpuEnv');
    this.title.icon = gpuIcon;
    this.title.caption = 'GPU Env';
    this.node.dataset.testid = 'gpu-env-panel';

    const heading = document.createElement('h2');
    heading.textContent = 'GPU Env';
    this.header.addWidget(new Widget({ node: heading }));
    this.toolbar.addItem(
      'refresh',
      new CommandToolbarButton({
        commands: options.commands,
        id: REFRESH_COMMAND,
        icon: refreshIcon,
        label: ''
      })
    );

    this.monitor = new GpuMonitor({
      client: options.client,
      interval: options.interval,
      // Ask nothing while the browser tab is hidden, the sidebar shows
      // another panel, or the section is collapsed.
      standby: () => document.hidden || !this._memory.body.isVisible
    });
    this._memory = new CollapsibleSection({
      label: 'GPU & memory',
      key: 'memory',
      body: new MemorySection(this.monitor)
    });
    this.addWidget(this._memory);
    this.addWidget(
      new CollapsibleSection({
        label: 'Environments',
        key: 'environments',
        body: createEnvironmentsSection()
      })
    );
    this.addWidget(
      new CollapsibleSection({
        label: 'Jobs',
        key: 'jobs',
        body: createJobsSection()
      })
    );
  }

  /** The poll behind the "GPU & memory" section. */
  readonly monitor: GpuMonitor;

  /** Refresh every section now. */
  refresh(): Promise<void> {
    return this.monitor.refresh();
  }

  override dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.monitor.dispose();
    super.dispose();
  }

  private _memory: CollapsibleSection;
}

export namespace GpuEnvPanel {
  export interface IOptions {
    client: GpuEnvClient;
    commands: CommandRegistry;
    /** Milliseconds between two refreshes. */
    interval?: number;
  }
}
