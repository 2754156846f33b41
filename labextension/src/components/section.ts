/**
 * A collapsible section of the sidebar: a title bar styled like JupyterLab's
 * accordion titles, and a body that keeps its natural height (the sidebar
 * scrolls as a whole, so no section is ever clipped).
 */
import { caretDownIcon } from '@jupyterlab/ui-components';
import { Panel, Widget } from '@lumino/widgets';

export class CollapsibleSection extends Panel {
  constructor(options: CollapsibleSection.IOptions) {
    super();
    this.addClass('jp-GpuEnv-collapsible');
    this.body = options.body;
    this.body.addClass('jp-GpuEnv-collapsibleBody');

    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'jp-GpuEnv-sectionTitle';
    button.id = `${this.body.id || options.key}-title`;
    const caret = caretDownIcon.element({
      tag: 'span',
      className: 'jp-GpuEnv-sectionCaret'
    });
    const label = document.createElement('span');
    label.className = 'jp-GpuEnv-sectionLabel';
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
  }

  /** The section's content. */
  readonly body: Widget;

  /** Whether the body is shown. */
  get expanded(): boolean {
    return !this.body.isHidden;
  }

  /** Show or hide the body. */
  toggle(): void {
    this._render(!this.expanded);
  }

  private _render(expanded: boolean): void {
    this.body.setHidden(!expanded);
    this.toggleClass('lm-mod-expanded', expanded);
    this._button.setAttribute('aria-expanded', String(expanded));
  }

  private _button: HTMLButtonElement;
}

export namespace CollapsibleSection {
  export interface IOptions {
    /** The title, e.g. "GPU & memory" (shown in capitals). */
    label: string;
    /** A short stable key, e.g. `memory` (used in ids and data attributes). */
    key: string;
    body: Widget;
    expanded?: boolean;
  }
}
