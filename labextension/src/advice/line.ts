/**
 * The send dialog's advice line: under the resources, what the notebook's
 * earlier runs measured and the smallest GPU or MIG slice that fits
 * (`GET jobs/advice`), with one button that fills the fields with it, and
 * where it would likely start soonest (a click switches backend). Asked
 * again when the backend changes, a moment after the last change, the
 * request before it aborted. Nothing measured: the server's quiet sentence;
 * a failing request hides the line and never stops the sending.
 */
import { Debouncer } from '@lumino/polling';

import { h } from '../components/form';
import type { IGpuAdvice, ISuggestedResources } from '../api/types';
import { IGpuFields, adviceButton, soonestLine } from './values';

export namespace AdviceLine {
  export interface IOptions {
    /** `GET jobs/advice` for the notebook on `backend`. */
    load: (backend: string, signal: AbortSignal) => Promise<IGpuAdvice>;
    /** The GPU fields as typed now (none: nothing is filled, no button). */
    fields?: () => IGpuFields;
    /** Fill the resources fields with the suggestion. */
    apply?: (suggestion: ISuggestedResources) => void;
    /** Choose another backend in the dialog. */
    switchBackend: (name: string) => void;
    /** Milliseconds after the last change before asking (300). */
    delay?: number;
  }
}

export class AdviceLine {
  constructor(private readonly _options: AdviceLine.IOptions) {
    this._debouncer = new Debouncer(() => this._load(), _options.delay ?? 300);
  }

  /** The line; hidden until an answer came. */
  readonly node = h('div', {
    class: 'jp-GpuEnv-advice',
    role: 'status',
    hidden: true,
    'data-testid': 'gpu-env-advice'
  });

  /** Ask for `backend` (after a pause; an earlier question is dropped). */
  ask(backend: string): void {
    this._backend = backend;
    this._controller?.abort();
    this._controller = null;
    void this._debouncer.invoke().catch(() => undefined);
  }

  /** Show or hide the button as the fields change. */
  refresh(): void {
    const button = this.node.querySelector<HTMLButtonElement>(
      '.jp-GpuEnv-adviceUse'
    );
    const { fields } = this._options;
    if (!button || !this._advice || !fields) {
      return;
    }
    const label = adviceButton(this._advice, fields());
    button.hidden = label === null;
    if (label) {
      button.textContent = label;
    }
  }

  /** The answer shown now, if any. */
  get advice(): IGpuAdvice | null {
    return this._advice;
  }

  dispose(): void {
    this._controller?.abort();
    this._debouncer.dispose();
  }

  private async _load(): Promise<void> {
    const backend = this._backend;
    if (!backend) {
      return;
    }
    const controller = new AbortController();
    this._controller = controller;
    this.node.dataset.state = 'loading';
    let advice: IGpuAdvice;
    try {
      advice = await this._options.load(backend, controller.signal);
    } catch (error) {
      if (this._controller === controller) {
        // Advice is a help, never a blocker: no line, no error.
        console.debug('jupyter-gpu-env: no GPU advice.', error);
        this._show(null);
      }
      return;
    }
    if (this._controller === controller && !controller.signal.aborted) {
      this._show(advice);
    }
  }

  private _show(advice: IGpuAdvice | null): void {
    this._advice = advice;
    delete this.node.dataset.state;
    if (!advice) {
      this.node.replaceChildren();
      this.node.hidden = true;
      return;
    }
    this.node.hidden = false;
    this.node.dataset.basedOn = advice.based_on;
    const sentence = h(
      'span',
      {
        class: 'jp-GpuEnv-adviceSentence',
        'data-testid': 'gpu-env-advice-sentence'
      },
      advice.sentence
    );
    const children: HTMLElement[] = [sentence];
    const { suggestion } = advice;
    const { apply } = this._options;
    if (suggestion && apply) {
      const use = h('button', {
        type: 'button',
        class: 'jp-mod-styled jp-GpuEnv-adviceUse',
        title: 'Fill the GPU fields with this suggestion',
        'data-testid': 'gpu-env-advice-use'
      });
      use.addEventListener('click', () => {
        apply(suggestion);
        this.refresh();
      });
      children.push(use);
    }
    const soonest = soonestLine(advice, this._backend ?? advice.backend);
    if (soonest) {
      const line = h(
        'div',
        {
          class: 'jp-GpuEnv-adviceSoonest jp-GpuEnv-note',
          'data-testid': 'gpu-env-advice-soonest'
        },
        soonest.text
      );
      const target = soonest.switchTo;
      if (target) {
        const link = h(
          'button',
          {
            type: 'button',
            class: 'jp-GpuEnv-link',
            'data-testid': 'gpu-env-advice-switch',
            title: `Send to ${target} instead`
          },
          `Switch to ${target}`
        );
        link.addEventListener('click', () =>
          this._options.switchBackend(target)
        );
        line.append(' · ', link);
      }
      children.push(line);
    }
    this.node.replaceChildren(...children);
    this.refresh();
  }

  private _backend: string | null = null;
  private _advice: IGpuAdvice | null = null;
  private _controller: AbortController | null = null;
  private _debouncer: Debouncer;
}
