/**
 * An environment's history (the changes it holds, newest first) and undo:
 * the dialog says what undo would restore, and Undo swaps that state back in.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { h } from '../../components/form';
import type { IEnvironmentHistory, IHistoryEntry } from '../../api/types';

/** How a history entry's time is shown: local date and time, to the minute. */
function when(seconds: number): string {
  return new Date(seconds * 1000).toLocaleString(undefined, {
    dateStyle: 'medium',
    timeStyle: 'short'
  });
}

function entryRow(entry: IHistoryEntry): HTMLElement {
  const detail = [
    entry.installed.length ? `installed ${entry.installed.join(', ')}` : '',
    entry.removed.length ? `removed ${entry.removed.join(', ')}` : ''
  ]
    .filter(Boolean)
    .join('; ');
  return h(
    'li',
    { class: 'jp-GpuEnv-historyEntry', 'data-kind': entry.kind },
    h('span', { class: 'jp-GpuEnv-historyWhen' }, when(entry.at)),
    h('span', { class: 'jp-GpuEnv-historySummary' }, entry.summary),
    detail ? h('div', { class: 'jp-GpuEnv-fieldHint' }, detail) : null
  );
}

/** The history as a list, and what undo would do. */
export class HistoryBody extends Widget {
  constructor(history: IEnvironmentHistory) {
    super({
      node: h('div', {
        class: 'jp-GpuEnv-history',
        'data-testid': 'gpu-env-history'
      })
    });
    if (history.changes.length === 0) {
      this.node.append(
        h('p', {}, 'No change has been made to this environment here yet.')
      );
    } else {
      this.node.append(
        h(
          'ol',
          { class: 'jp-GpuEnv-historyList' },
          ...history.changes.map(entryRow)
        )
      );
    }
    this.node.append(
      h(
        'p',
        {
          class: 'jp-GpuEnv-historyUndo',
          'data-testid': 'gpu-env-history-undo'
        },
        history.undo ??
          'Undo is not available: no earlier state of this environment is kept.'
      )
    );
  }
}

/** Show the history; answers whether the user chose to undo. */
export async function reviewHistory(
  history: IEnvironmentHistory
): Promise<boolean> {
  const undo = history.undo;
  const buttons = [Dialog.cancelButton({ label: 'Close' })];
  if (undo) {
    const label = undo.startsWith('Redo') ? 'Redo' : 'Undo last change';
    buttons.push(Dialog.warnButton({ label }));
  }
  const result = await showDialog({
    title: `History of '${history.environment}'`,
    body: new HistoryBody(history),
    buttons,
    // Enter closes: an undo is chosen by its button, never by a key press.
    defaultButton: 0
  });
  return undo !== null && result.button.accept;
}
