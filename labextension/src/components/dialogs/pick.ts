/**
 * A small dialog that asks which one of a few listed things (an
 * environment, a job, a sweep) a palette command applies to: a drop-down of
 * their descriptions, the first chosen, Enter or the accept button to go on.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';

import { field, FormBody, select } from '../form';

/** One thing to choose: its id (the answer) and its line in the list. */
export interface IPickItem {
  id: string;
  label: string;
}

class PickBody extends FormBody<string | null> {
  constructor(label: string, items: readonly IPickItem[], testId: string) {
    super();
    this._select = select(
      items.map(item => [item.id, item.label] as const),
      items[0]?.id,
      { 'data-testid': testId, 'aria-label': label }
    );
    this.node.append(field(label, this._select));
  }

  getValue(): string | null {
    return this._select.value || null;
  }

  private _select: HTMLSelectElement;
}

/**
 * Ask which of `items` (in the order given); the chosen id, or null when
 * the user cancels.
 */
export async function pickOne(options: {
  title: string;
  label: string;
  items: readonly IPickItem[];
  okLabel: string;
  /** The list's `data-testid`. */
  testId?: string;
}): Promise<string | null> {
  const body = new PickBody(
    options.label,
    options.items,
    options.testId ?? 'gpu-env-pick'
  );
  const result = await showDialog({
    title: options.title,
    body,
    focusNodeSelector: 'select',
    buttons: [
      Dialog.cancelButton(),
      Dialog.okButton({ label: options.okLabel })
    ]
  });
  return result.button.accept ? result.value : null;
}
