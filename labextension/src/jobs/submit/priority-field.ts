/**
 * The send dialog's priority: one choice per priority the chosen backend
 * offers (`BackendInfo.priorities`), each with what it means there in the
 * site's words. Shown only where the backend offers more than `normal`;
 * elsewhere the job is sent as `normal`.
 */
import { h } from '../../components/form';
import type { IBackendInfo, JobPriority } from '../../api/types';
import { offersChoice, priorityLabel } from '../../advice/values';

let counter = 0;

export class PriorityField {
  /**
   * `initial`: the priority to start at ("Run again…": the job's). `words`:
   * what a priority means for what is sent, where the backend's own words
   * (written for notebook jobs) would not hold.
   */
  constructor(
    initial: JobPriority = 'normal',
    private readonly _words: Partial<Record<JobPriority, string>> = {}
  ) {
    this._chosen = initial;
  }

  readonly node = h('div', {
    class: 'jp-GpuEnv-field jp-GpuEnv-priority',
    role: 'radiogroup',
    'aria-label': 'Priority',
    hidden: true,
    'data-testid': 'gpu-env-submit-priority'
  });

  /** Offer what `info` offers; keep the choice where it still is offered. */
  setBackend(info: IBackendInfo | undefined): void {
    const offers = info?.priorities ?? [];
    const shown = offersChoice(offers);
    this.node.hidden = !shown;
    if (!shown) {
      this.node.replaceChildren();
      return;
    }
    if (!offers.some(offer => offer.name === this._chosen)) {
      this._chosen = 'normal';
    }
    const name = `gpu-env-priority-${++counter}`;
    const rows = offers.map(offer => {
      const input = h('input', {
        type: 'radio',
        name,
        value: offer.name,
        checked: offer.name === this._chosen,
        'data-testid': `gpu-env-priority-${offer.name}`
      });
      input.addEventListener('change', () => {
        if (input.checked) {
          this._chosen = offer.name;
        }
      });
      return h(
        'label',
        { class: 'jp-GpuEnv-priorityOption' },
        input,
        h(
          'span',
          { class: 'jp-GpuEnv-priorityName' },
          priorityLabel(offer.name)
        ),
        h(
          'span',
          {
            class: 'jp-GpuEnv-priorityWords jp-GpuEnv-note',
            'data-testid': 'gpu-env-priority-description'
          },
          this._words[offer.name] ?? offer.description
        )
      );
    });
    this.node.replaceChildren(
      h('span', { class: 'jp-GpuEnv-fieldLabel' }, 'Priority'),
      ...rows
    );
  }

  /** The priority to send: `normal` where no choice is shown. */
  value(): JobPriority {
    return this.node.hidden ? 'normal' : this._chosen;
  }

  private _chosen: JobPriority;
}
