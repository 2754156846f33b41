/**
 * The "GPU Env" sidebar: a header, a toolbar with the refresh button, and
 * the collapsible sections features add through `IGpuEnvSidebar`, kept in
 * the order of their ranks whatever the order the plugins start in.
 */
import {
  CommandToolbarButton,
  SidePanel,
  refreshIcon
} from '@jupyterlab/ui-components';
import { IStateDB } from '@jupyterlab/statedb';
import { CommandRegistry } from '@lumino/commands';
import { DisposableDelegate, IDisposable } from '@lumino/disposable';
import { Panel, Widget } from '@lumino/widgets';

import { gpuIcon } from '../components/icons';
import { CollapsibleSection } from './collapsible';
import type { ISidebarSection } from './tokens';

/** The sidebar's widget id (also its layout-restorer name). */
export const PANEL_ID = 'jupyter-gpu-env:sidebar';

/** The refresh command; its toolbar button lives in the panel. */
export const REFRESH_COMMAND = 'jupyter-gpu-env:refresh';

/** The rank of a section that names none: after the built-in ones. */
const DEFAULT_RANK = 1000;

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
    this._state = options.state ?? null;

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
  }

  /** Add `section` in the place its rank gives; disposing removes it. */
  addSection(section: ISidebarSection): IDisposable {
    if (this._sections.some(s => s.spec.id === section.id)) {
      throw new Error(`jupyter-gpu-env: a section '${section.id}' exists.`);
    }
    const widget = new CollapsibleSection({
      key: section.id,
      label: section.title,
      body: section.widget,
      state: this._state
    });
    const rank = section.rank ?? DEFAULT_RANK;
    let index = this._sections.findIndex(s => s.rank > rank);
    if (index < 0) {
      index = this._sections.length;
    }
    this._sections.splice(index, 0, { spec: section, rank, widget });
    this.insertWidget(index, widget);
    return new DisposableDelegate(() => {
      this._sections = this._sections.filter(s => s.widget !== widget);
      widget.dispose();
    });
  }

  /** Expand the section `id` and scroll it into view. */
  reveal(id: string): void {
    const section = this._sections.find(s => s.spec.id === id)?.widget;
    section?.expand();
    section?.node.scrollIntoView({ block: 'nearest' });
  }

  /** Refresh every section now. */
  async refresh(): Promise<void> {
    await Promise.all(this._sections.map(s => s.spec.refresh?.()));
  }

  private _state: IStateDB | null;
  private _sections: {
    spec: ISidebarSection;
    rank: number;
    widget: CollapsibleSection;
  }[] = [];
}

export namespace GpuEnvPanel {
  export interface IOptions {
    commands: CommandRegistry;
    /** Where UI state (collapsed sections) is kept. */
    state?: IStateDB | null;
  }
}
