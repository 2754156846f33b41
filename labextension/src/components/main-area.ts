/**
 * A view in the main area (a job's log, a sweep's results): a closable
 * MainAreaWidget with its title and toolbar, around a view that owns the
 * model it polls.
 */
import { MainAreaWidget } from '@jupyterlab/apputils';
import { LabIcon, Toolbar } from '@jupyterlab/ui-components';
import { IDisposable } from '@lumino/disposable';
import { Widget } from '@lumino/widgets';

/** `owned`, disposed when `owner` is (a view's own model). */
export function ownedBy<T extends IDisposable>(owner: Widget, owned: T): T {
  owner.disposed.connect(() => owned.dispose());
  return owned;
}

/**
 * The node that says what a view is doing (for `createMainAreaWidget`'s
 * `status`): read out politely as it changes.
 */
export function createStatusNode(testId?: string): HTMLSpanElement {
  const status = document.createElement('span');
  status.className = 'jp-GpuEnv-jobLogStatus';
  if (testId) {
    status.dataset.testid = testId;
  }
  status.setAttribute('role', 'status');
  return status;
}

/**
 * A closable main-area widget around `content`: its id and title, the
 * toolbar's `items` in order, then a spacer and `status` at the right end.
 */
export function createMainAreaWidget<T extends Widget>(options: {
  content: T;
  id: string;
  label: string;
  caption: string;
  icon: LabIcon;
  items?: [string, Widget][];
  /** What the view is doing, shown at the toolbar's end. */
  status: HTMLElement;
}): MainAreaWidget<T> {
  const widget = new MainAreaWidget({ content: options.content });
  widget.id = options.id;
  widget.title.label = options.label;
  widget.title.caption = options.caption;
  widget.title.icon = options.icon;
  widget.title.closable = true;
  for (const [name, item] of options.items ?? []) {
    widget.toolbar.addItem(name, item);
  }
  widget.toolbar.addItem('spacer', Toolbar.createSpacerItem());
  widget.toolbar.addItem('status', new Widget({ node: options.status }));
  return widget;
}
