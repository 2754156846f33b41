/**
 * A view in the main area (a job's log, a sweep's results): a closable
 * MainAreaWidget with its title and toolbar, around a view that owns the
 * model it polls; views of one kind reopened after a reload, as
 * JupyterLab's documents are.
 */
import { ILayoutRestorer } from '@jupyterlab/application';
import { MainAreaWidget, WidgetTracker } from '@jupyterlab/apputils';
import { LabIcon, Toolbar } from '@jupyterlab/ui-components';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import { IDisposable } from '@lumino/disposable';
import { Widget } from '@lumino/widgets';

import { ApiError } from '../api/request';

/** The argument a command is called with when the layout restorer reopens its view. */
export const RESTORING = 'restoring';

/**
 * The views of one kind, tracked under `namespace` and reopened after a
 * reload by `command` with the arguments that name each (and `RESTORING`).
 * The command adds each view it opens to the tracker answered; a command
 * that fails on a restore (its subject deleted meanwhile: see `unlessGone`)
 * opens nothing, and the restorer forgets that view.
 */
export function restorableViews<T extends Widget>(options: {
  restorer: ILayoutRestorer | null;
  namespace: string;
  command: string;
  args: (widget: T) => ReadonlyPartialJSONObject;
  name: (widget: T) => string;
}): WidgetTracker<T> {
  const tracker = new WidgetTracker<T>({ namespace: options.namespace });
  void options.restorer?.restore(tracker, {
    command: options.command,
    args: widget => ({ ...options.args(widget), [RESTORING]: true }),
    name: options.name
  });
  return tracker;
}

/**
 * On a restore (`args` has `RESTORING`): throws when `ask` answers 404, so
 * that nothing opens for what was deleted since the page was left. Any
 * other failure (the server not answering yet) lets the view open and say
 * it as it polls.
 */
export async function unlessGone(
  args: ReadonlyPartialJSONObject,
  ask: () => Promise<unknown>
): Promise<void> {
  if (!args[RESTORING]) {
    return;
  }
  try {
    await ask();
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      throw new Error(`Not restored: ${error.message}`);
    }
  }
}

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
