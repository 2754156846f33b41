/**
 * A collapsible section of the sidebar: a title bar drawn by JupyterLab's
 * own accordion-title styles, and a body that keeps its natural height (the
 * sidebar scrolls as a whole, so no section is ever clipped).
 *
 * Whether a section is collapsed is UI state, not a setting: it is kept in
 * JupyterLab's state database, so it survives a page reload.
 */
import { IStateDB } from '@jupyterlab/statedb';
import { caretDownIcon } from '@jupyterlab/ui-components';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import { Panel, Widget } from '@lumino/widgets';

/** The state database key of a section's state. */
export function sectionStateKey(key: string): string {
  return `jupyter-gpu-env:section:${key}`;
}

export class CollapsibleSection extends Panel {
  constructor(options: CollapsibleSection.IOptions) {
    super();
    this.addClass('jp-GpuEnv-collapsible');
    this.body = options.body;
    this.body.addClass('jp-GpuEnv-collapsibleBody');
    this._state = options.state ?? null;
    this._stateKey = sectionStateKey(options.key);

    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'jp-AccordionPanel-title jp-GpuEnv-sectionTitle';
    button.id = `${this.body.id || options.key}-title`;
    const caret = caretDownIcon.element({
      tag: 'span',
      className: 'lm-AccordionPanel-titleCollapser'
    });
    const label = document.createElement('span');
    label.className = 'lm-AccordionPanel-titleLabel';
    label.textContent = options.label;
    button.append(caret, label);
    button.addEventListener('click', () => this.toggle());
    this._button = button;

    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-labelledby', button.id);
    this.node.dataset.section = options.key;
    this.title.label = options.label;

    this.addWidget(new Widget({ node: button }));
    this.addWidget(this.body);
    this._render(options.expanded ?? true);
    void this._restore();
  }

  /** The section's content. */
  readonly body: Widget;

  /** Whether the body is shown. */
  get expanded(): boolean {
    return !this.body.isHidden;
  }

  /** Show the body if it is collapsed (and remember it). */
  expand(): void {
    if (!this.expanded) {
      this.toggle();
    }
  }

  /** Show or hide the body (and remember it). */
  toggle(): void {
    this._render(!this.expanded);
    this._touched = true;
    const value: ReadonlyPartialJSONObject = { expanded: this.expanded };
    this._state?.save(this._stateKey, value).catch(reason => {
      console.warn('jupyter-gpu-env: cannot save the section state.', reason);
    });
  }

  /** Collapse as the user left it, unless they toggled meanwhile. */
  private async _restore(): Promise<void> {
    try {
      const saved = (await this._state?.fetch(this._stateKey)) as
        ReadonlyPartialJSONObject | undefined;
      if (!this._touched && typeof saved?.expanded === 'boolean') {
        this._render(saved.expanded);
      }
    } catch (reason) {
      console.warn('jupyter-gpu-env: cannot read the section state.', reason);
    }
  }

  private _render(expanded: boolean): void {
    this.body.setHidden(!expanded);
    this._button.classList.toggle('lm-mod-expanded', expanded);
    this.toggleClass('lm-mod-expanded', expanded);
    this._button.setAttribute('aria-expanded', String(expanded));
  }

  private _button: HTMLButtonElement;
  private _state: IStateDB | null;
  private _stateKey: string;
  private _touched = false;
}

export namespace CollapsibleSection {
  export interface IOptions {
    /** The title, e.g. "GPU & memory" (shown in capitals). */
    label: string;
    /** A short stable key, e.g. `memory` (ids, data attributes, state). */
    key: string;
    body: Widget;
    /** Where the collapsed state is kept; not kept without it. */
    state?: IStateDB | null;
    expanded?: boolean;
  }
}
