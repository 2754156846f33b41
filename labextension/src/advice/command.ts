/**
 * "Suggest a GPU size for this notebook" (palette): the right-size advice
 * for the current notebook in a dialog — the sentence, where it would start
 * soonest — on a backend the user can change, and "Send to batch…" to send
 * it with the suggestion one click away.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { Dialog, ICommandPalette, Notification } from '@jupyterlab/apputils';
import { NotebookPanel } from '@jupyterlab/notebook';
import { Widget } from '@lumino/widgets';

import { messageOf } from '../api/request';
import type { IBackendInfo, IGpuAdvice } from '../api/types';
import { field, h, select } from '../components/form';
import { AdviceLine } from './line';

/** What the command asks the server: the backends, and advice on one. */
export interface IAdviceClient {
  backends(): Promise<IBackendInfo[]>;
  advice(
    query: { backend: string; notebook_path: string },
    signal?: AbortSignal
  ): Promise<IGpuAdvice>;
}

export interface IAdviceCommandOptions {
  client: IAdviceClient;
  /** The command's id. */
  id: string;
  /** The send dialog's command, offered as "Send to batch…" where it exists. */
  send: string;
  /** The notebook in the main area now, if any. */
  current: () => NotebookPanel | null;
  palette: ICommandPalette | null;
  category: string;
}

/** The dialog's body: the backend, and the advice for the notebook there. */
class AdviceBody extends Widget {
  constructor(client: IAdviceClient, path: string, backends: IBackendInfo[]) {
    super({ node: h('div', { class: 'jp-GpuEnv-form' }) });
    this.node.dataset.testid = 'gpu-env-advice-dialog';
    const backend = select(
      backends.map(b => [b.name, b.name]),
      backends[0]?.name,
      { 'data-testid': 'gpu-env-advice-backend' }
    );
    this._line = new AdviceLine({
      load: (name, signal) =>
        client.advice({ backend: name, notebook_path: path }, signal),
      switchBackend: name => {
        backend.value = name;
        this._line.ask(name);
      },
      delay: 0
    });
    backend.addEventListener('change', () => this._line.ask(backend.value));
    this.node.append(
      h(
        'div',
        { class: 'jp-GpuEnv-fieldHint' },
        'From the GPU memory and use that earlier runs of ',
        h('code', {}, path),
        ' measured:'
      ),
      field('Backend', backend),
      this._line.node
    );
    this._line.ask(backend.value);
  }

  override dispose(): void {
    this._line.dispose();
    super.dispose();
  }

  private _line: AdviceLine;
}

export function registerAdviceCommand(
  app: JupyterFrontEnd,
  options: IAdviceCommandOptions
): void {
  const { commands } = app;
  const { client, current, id, send: sendId } = options;
  commands.addCommand(id, {
    label: 'Suggest a GPU size for this notebook',
    caption:
      'The smallest GPU or MIG slice that holds what earlier runs of this ' +
      'notebook used, and where it would start soonest',
    isEnabled: () => current() !== null,
    execute: async () => {
      const panel = current();
      if (!panel) {
        return;
      }
      const path = panel.context.path;
      let backends: IBackendInfo[];
      try {
        backends = await client.backends();
      } catch (error) {
        Notification.error(`Cannot suggest a GPU size: ${messageOf(error)}`);
        return;
      }
      if (backends.length === 0) {
        Notification.error(
          'Cannot suggest a GPU size: the server has no batch backend configured.'
        );
        return;
      }
      const body = new AdviceBody(client, path, backends);
      const send = commands.hasCommand(sendId);
      const result = await new Dialog({
        title: `GPU size for “${path.split('/').pop()}”`,
        body,
        buttons: [
          Dialog.cancelButton({ label: 'Close' }),
          ...(send ? [Dialog.okButton({ label: 'Send to batch…' })] : [])
        ]
      }).launch();
      if (result.button.accept && send) {
        await commands.execute(sendId);
      }
    }
  });
  options.palette?.addItem({
    command: id,
    category: options.category
  });
}
