/**
 * The token through which features add sections to the GPU Env sidebar, as
 * JupyterLab's running-sessions sidebar takes `IRunningSessionManagers.add()`.
 * The sidebar knows none of its sections: the GPU, environments, images and
 * jobs plugins register theirs here, as a third-party extension would.
 */
import { Token } from '@lumino/coreutils';
import { IDisposable } from '@lumino/disposable';
import { Widget } from '@lumino/widgets';

/** One collapsible section of the sidebar, as its feature describes it. */
export interface ISidebarSection {
  /**
   * A short stable key, e.g. `memory`: the section's `data-section`, its
   * title's id and the state database key of its collapsed state.
   */
  readonly id: string;
  /** The title, e.g. "GPU & memory" (shown in capitals). */
  readonly title: string;
  /** Sections are shown by increasing rank (the built-in ones: 100–400). */
  readonly rank?: number;
  /** The body, shown below the title while the section is expanded. */
  readonly widget: Widget;
  /** What the sidebar's Refresh command asks of this section. */
  refresh?(): Promise<void>;
}

/** The GPU Env sidebar, as the features that fill it see it. */
export interface IGpuEnvSidebar {
  /** The sidebar's widget id (also its layout-restorer name). */
  readonly id: string;
  /** Add a section; disposing the handle removes it again. */
  addSection(section: ISidebarSection): IDisposable;
  /** Open the sidebar in the left area. */
  activate(): void;
  /** Open the sidebar, expand the section `id` and scroll it into view. */
  reveal(id: string): void;
  /** Refresh every section now. */
  refresh(): Promise<void>;
}

export const IGpuEnvSidebar = new Token<IGpuEnvSidebar>(
  'jupyter-gpu-env:IGpuEnvSidebar',
  'The GPU Env sidebar: features add their collapsible sections to it.'
);
