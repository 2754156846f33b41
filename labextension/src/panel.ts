/**
 * The "GPU Env" sidebar: a header, a toolbar, and one collapsible section per
 * feature (GPU & memory, Environments, Images, Jobs).
 */
import {
  CommandToolbarButton,
  SidePanel,
  refreshIcon
} from '@jupyterlab/ui-components';
import { KernelSpec, ServerConnection, Session } from '@jupyterlab/services';
import { IStateDB } from '@jupyterlab/statedb';
import { CommandRegistry } from '@lumino/commands';
import { Panel, Widget } from '@lumino/widgets';

import { gpuIcon } from './components/icons';
import { CollapsibleSection } from './components/section';
import { EnvironmentActions } from './environments/actions';
import { EnvironmentsModel } from './environments/model';
import { ENVIRONMENT_TASKS, EnvironmentsSection } from './environments/section';
import { TaskTracker } from './environments/tasks';
import { GpuClient } from './gpu/client';
import { GpuMonitor } from './gpu/monitor';
import { MemorySection } from './gpu/section';
import { ImagesSection } from './images/section';
import { JobsModel } from './jobs/model';
import { JobsSection } from './jobs/section';

/** The sidebar's widget id (also its layout-restorer name). */
export const PANEL_ID = 'jupyter-gpu-env:sidebar';

/** The refresh command; its toolbar button lives in the panel. */
export const REFRESH_COMMAND = 'jupyter-gpu-env:refresh';

export class GpuEnvPanel extends SidePanel {
  constructor(options: GpuEnvPanel.IOptions) {
    // A plain scrolling column rather than an accordion: sections keep
    // their natural height and the empty states are never clipped.
    super({ content: new Panel() });
    // Section titles are drawn by JupyterLab's accordion-title styles.
    this.content.addClass('lm-AccordionPanel');
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

    const section = (key: string, label: string, body: Widget) => {
      const widget = new CollapsibleSection({
        key,
        label,
        body,
        state: options.state
      });
      this.addWidget(widget);
      this._sections.set(key, widget);
      return widget;
    };

    // Ask nothing while the browser tab is hidden, the sidebar shows
    // another panel, or the section is collapsed.
    this.gpu = new GpuClient(options.serverSettings);
    this.monitor = new GpuMonitor({
      client: this.gpu,
      interval: options.interval,
      visible: () => memory.body.isVisible
    });
    const memory = section(
      'memory',
      'GPU & memory',
      new MemorySection(this.monitor, { commands: options.commands })
    );

    // Environments and images: one model for both lists, asked when shown
    // and every 30 s while either section is visible.
    const model = new EnvironmentsModel({
      serverSettings: options.serverSettings,
      visible: () => environments.body.isVisible || images.body.isVisible
    });
    this.tasks = new TaskTracker({
      serverSettings: options.serverSettings,
      kinds: ENVIRONMENT_TASKS
    });
    this.environments = new EnvironmentActions({
      model,
      tracker: this.tasks,
      kernelspecs: options.kernelspecs,
      sessions: options.sessions
    });
    const environments = section(
      'environments',
      'Environments',
      new EnvironmentsSection(this.environments, options.commands)
    );
    const images = section(
      'images',
      'Images',
      new ImagesSection(model, options.commands)
    );
    // Pick up tasks started before this page was loaded.
    this.tasks.attach().catch(reason => {
      console.warn('jupyter-gpu-env: cannot list running tasks.', reason);
    });
    this._jobs = options.jobs ?? null;
    if (this._jobs) {
      section(
        'jobs',
        'Jobs',
        new JobsSection({ model: this._jobs, commands: options.commands })
      );
    }
  }

  /** The poll behind the "GPU & memory" section. */
  readonly monitor: GpuMonitor;

  /** The GPU calls of the REST API (samples, release, environment checks). */
  readonly gpu: GpuClient;

  /** The long operations (clone, install, pack, GPU check) being followed. */
  readonly tasks: TaskTracker;

  /** The Environments and Images actions (also behind palette commands). */
  readonly environments: EnvironmentActions;

  /** Expand the section `key` (`environments`, `images`…) and scroll it into view. */
  reveal(key: string): void {
    const section = this._sections.get(key);
    section?.expand();
    section?.node.scrollIntoView({ block: 'nearest' });
  }

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

  private _jobs: JobsModel | null;
  private _sections = new Map<string, CollapsibleSection>();
}

export namespace GpuEnvPanel {
  export interface IOptions {
    serverSettings: ServerConnection.ISettings;
    commands: CommandRegistry;
    /** Milliseconds between two refreshes. */
    interval?: number;
    /** Refreshed after kernel changes, so the Launcher follows at once. */
    kernelspecs?: KernelSpec.IManager | null;
    sessions?: Session.IManager | null;
    /** The batch jobs (the jobs plugin's model); no Jobs section without. */
    jobs?: JobsModel | null;
    /** Where UI state (collapsed sections) is kept. */
    state?: IStateDB | null;
  }
}
