/**
 * `SendingDialog`: a dialog whose accept button sends what its form holds and
 * closes only once the server has answered with what it made. A refusal
 * (400, 409) shows in the form with the server's words, and whatever the
 * caller offers about it, with everything typed kept; Cancel waits for a
 * request in flight, which may still make the thing.
 */
import { Dialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { ApiError, messageOf } from '../../api/request';

/** A dialog body that gives its value and shows a refusal in itself. */
export interface ISendingBody<T> extends Widget, Dialog.IBodyWidget<T> {
  getValue(): T;
  showError(message: string, ...actions: HTMLElement[]): void;
  clearError(): void;
}

const SEND = 1;

export class SendingDialog<T, R> extends Dialog<T> {
  constructor(options: {
    title: string;
    body: ISendingBody<T>;
    accept: string;
    send: (value: T) => Promise<R>;
    /** What a refusal offers besides its message (buttons). */
    actions?: (error: ApiError) => HTMLElement[];
    focusNodeSelector?: string;
  }) {
    super({
      title: options.title,
      body: options.body,
      buttons: [
        Dialog.cancelButton(),
        Dialog.okButton({ label: options.accept })
      ],
      defaultButton: SEND,
      focusNodeSelector: options.focusNodeSelector
    });
    this._form = options.body;
    this._send = options.send;
    this._actions = options.actions ?? (() => []);
  }

  /** What the server made, once it answered. */
  result: R | null = null;
  /** The value that made it. */
  sent: T | null = null;

  override resolve(index?: number): void {
    if ((index ?? SEND) !== SEND || this.result) {
      if (!this._sending) {
        super.resolve(index);
      }
      return;
    }
    if (!this._sending) {
      void this._submit();
    }
  }

  override reject(): void {
    // A request in flight may make the thing: wait for its answer.
    if (!this._sending) {
      super.reject();
    }
  }

  private async _submit(): Promise<void> {
    const button = this.node.querySelector<HTMLButtonElement>(
      '.jp-Dialog-button.jp-mod-accept'
    );
    let value: T;
    try {
      value = this._form.getValue();
    } catch (error) {
      this._form.showError(messageOf(error));
      return;
    }
    this._sending = true;
    this._form.clearError();
    this.node.dataset.sending = 'true';
    if (button) {
      button.disabled = true;
    }
    try {
      this.result = await this._send(value);
      this.sent = value;
    } catch (error) {
      this._form.showError(
        messageOf(error),
        ...(error instanceof ApiError ? this._actions(error) : [])
      );
    } finally {
      this._sending = false;
      delete this.node.dataset.sending;
      if (button) {
        button.disabled = false;
      }
    }
    if (this.result) {
      super.resolve(SEND);
    }
  }

  private _form: ISendingBody<T>;
  private _send: (value: T) => Promise<R>;
  private _actions: (error: ApiError) => HTMLElement[];
  private _sending = false;
}
