/**
 * "Run after…" in the send dialog: a choice of one queued or running job
 * after which the notebook runs (then the dialog sends a pipeline of it,
 * run-after.ts), or none, to run at once.
 */
import { field, h } from '../../components/form';
import type { IJob } from '../../api/types';
import { formatTime } from '../format';
import { runAfterChoices } from './run-after';

export class RunAfterField {
  /** Offers the queued and running ones of `jobs`, newest first. */
  constructor(jobs: readonly IJob[]) {
    this._jobs = runAfterChoices(jobs);
    this._select = h(
      'select',
      { class: 'jp-mod-styled', 'data-testid': 'gpu-env-submit-after' },
      h('option', { value: '' }, 'Nothing: run as soon as possible'),
      ...this._jobs.map(job =>
        h(
          'option',
          { value: job.id },
          `${job.name} — ${job.state} on ${job.backend}, sent ${formatTime(job.created_at)}`
        )
      )
    );
    const hint = h(
      'div',
      { class: 'jp-GpuEnv-fieldHint' },
      this._jobs.length
        ? 'Runs once the chosen job has succeeded, as a pipeline of the ' +
            'two; its notebook receives the job’s folder and results as ' +
            '`upstream`.'
        : 'No job is queued or running to wait for.'
    );
    this._select.disabled = this._jobs.length === 0;
    this.node = h(
      'fieldset',
      { class: 'jp-GpuEnv-formSection' },
      h('legend', {}, 'Run after…'),
      field('Run after', this._select),
      hint
    );
  }

  readonly node: HTMLFieldSetElement;

  /** The job chosen to wait for, or null. */
  job(): IJob | null {
    return this._jobs.find(job => job.id === this._select.value) ?? null;
  }

  private _jobs: IJob[];
  private _select: HTMLSelectElement;
}
