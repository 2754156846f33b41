/**
 * The "GPU Env" sidebar: a header, a toolbar, and one collapsible section per
 * feature (GPU & memory, Environments, Images, Jobs).
 */
import {
  CommandToolbarButton,
  SidePanel,
  refreshIcon
} from '@jupyterlab/ui-components';
import { KernelSpec, Session } from '@jupyterlab/services';
import { CommandRegistry } from '@lumino/commands';
import { Panel, Widget } from '@lumino/widgets';

import { GpuEnvClient } from './api';
import { CollapsibleSection } from './components/section';
import { gpuIcon } from './icons';
import { GpuMonitor } from './monitor';
import { EnvironmentsSection } from './sections/environments';
import { EnvironmentActions } from './sections/environments-actions';
import { EnvironmentsModel } from './sections/environments-model';
import { ImagesSection } from './sections/images';
import { MemorySection } from './sections/memory';
import { JobsModel } from './jobs/model';
import { JobsSection } from './jobs/section';
import { createJobsSection } from './sections/placeholder';
import { TaskTracker } from './tasks';

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
      body: new MemorySection(this.monitor, {
        client: options.client,
        commands: options.commands
      })
    });
    this.addWidget(this._memory);

    // Environments and images: one model for both lists, asked when shown
    // and every 30 s while either section is visible.
    const model = new EnvironmentsModel({
      client: options.client,
      standby: () =>
        document.hidden ||
        !(this._environments.body.isVisible || this._images.body.isVisible)
    });
    this.tasks = new TaskTracker({
      client: options.client,
      kinds: ['clone', 'install', 'pack']
    });
    this.environments = new EnvironmentActions({
      model,
      tracker: this.tasks,
      kernelspecs: options.kernelspecs,
      sessions: options.sessions
    });
    this._environments = new CollapsibleSection({
      label: 'Environments',
      key: 'environments',
      body: new EnvironmentsSection(this.environments)
    });
    this._images = new CollapsibleSection({
      label: 'Images',
      key: 'images',
      body: new ImagesSection(model)
    });
    this.addWidget(this._environments);
    this.addWidget(this._images);
    // Pick up tasks started before this page was loaded.
    this.tasks.attach().catch(reason => {
      console.warn('jupyter-gpu-env: cannot list running tasks.', reason);
    });
    this._jobs = options.jobs ?? null;
    this.addWidget(
      new CollapsibleSection({
        label: 'Jobs',
        key: 'jobs',
        body: this._jobs
          ? new JobsSection({ model: this._jobs, commands: options.commands })
          : createJobsSection()
      })
    );
  }

  /** The poll behind the "GPU & memory" section. */
  readonly monitor: GpuMonitor;

  /** The long operations (clone, install, pack) being followed. */
  readonly tasks: TaskTracker;

  /** The Environments and Images actions (also behind palette commands). */
  readonly environments: EnvironmentActions;

  /** Refresh every section now. */
  async refresh(): Promise<void> {
    await Promise.all([
      this.monitor.refresh(),
      this.environments.model.refresh(),
      this._jobs?.refresh()
    ]);
  }

  override dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.monitor.dispose();
    this.tasks.dispose();
    this.environments.model.dispose();
    super.dispose();
  }

  private _memory: CollapsibleSection;
  private _environments: CollapsibleSection;
  private _images: CollapsibleSection;
  private _jobs: JobsModel | null;
}

export namespace GpuEnvPanel {
  export interface IOptions {
    client: GpuEnvClient;
    commands: CommandRegistry;
    /** Milliseconds between two refreshes. */
    interval?: number;
    /** Refreshed after kernel changes, so the Launcher follows at once. */
    kernelspecs?: KernelSpec.IManager | null;
    sessions?: Session.IManager | null;
    /** The batch jobs (from the jobs plugin); a placeholder without. */
    jobs?: JobsModel | null;
  }
}
